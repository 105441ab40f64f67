import { packageBuild } from '../../tsup.shared';

// Vite is needed only by `zerda demo --web` run from the sources (it bundles the page there), and is
// imported lazily: never bundled into the CLI.
export default packageBuild(['src/index.ts', 'src/bin.ts'], { external: ['vite'] });
