import { packageBuild } from '../../tsup.shared';

export default packageBuild(['src/index.ts', 'src/testing.ts']);
