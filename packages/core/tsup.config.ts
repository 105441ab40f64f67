import { packageBuild } from '../../tsup.shared';

export default packageBuild({
  index: 'src/index.ts',
  backend: 'src/backend/index.ts',
  node: 'src/node.ts',
  testing: 'src/testing.ts',
});
