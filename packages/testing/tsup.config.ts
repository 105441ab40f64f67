import { packageBuild } from '../../tsup.shared';

// ESM only: the suite imports vitest, which cannot be loaded with require().
export default packageBuild(['src/index.ts'], { format: ['esm'] });
