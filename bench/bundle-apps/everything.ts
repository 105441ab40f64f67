// Every export of @zerda/core kept (the upper bound a bundler could not shake).
import * as zerda from '@zerda/core';

export default zerda;
