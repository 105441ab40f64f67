// The two versions of a keyword retriever that the save crash test alternates between: different
// sizes, texts and metadata, so a load tells at once which one it found and whether it is whole.
import type { Analyzer } from '../../text/index.js';
import { loadKeywordRetriever } from '../keyword-files.js';
import { KeywordRetriever } from '../keyword-retriever.js';

export type SaveVersion = 'A' | 'B';

/** Chunks in each version: small, so that a new process builds both in a few milliseconds. */
export const versionSizes: Record<SaveVersion, number> = { A: 120, B: 160 };

/** A plain analyser (the same name in the saving process and the loading one). */
export const saveTestAnalyzer: Analyzer = {
  name: 'save-crash-test-words',
  analyze: (text) =>
    text
      .toLowerCase()
      .split(/\s+/u)
      .filter((term) => term.length > 0),
};

export function otherVersion(version: SaveVersion): SaveVersion {
  return version === 'A' ? 'B' : 'A';
}

export function buildVersion(version: SaveVersion): KeywordRetriever {
  const retriever = new KeywordRetriever({ analyzer: saveTestAnalyzer });
  const marker = version === 'A' ? 'alpha' : 'beta';
  const chunks = Array.from({ length: versionSizes[version] }, (_, index) => ({
    id: `c${index}`,
    text: `${marker} document ${index} ${Array.from({ length: 24 }, (_, word) => `w${(index * 7 + word * 13) % 997}`).join(' ')}`,
    metadata: { version, position: index },
  }));
  retriever.add(chunks);
  return retriever;
}

/** Loads a folder and says which version it holds, after checking that it is that version, whole. */
export async function loadedVersion(directory: string): Promise<SaveVersion> {
  const loaded = await loadKeywordRetriever(directory, { analyzer: saveTestAnalyzer });
  const version: SaveVersion = loaded.size === versionSizes.A ? 'A' : 'B';
  const fail = (message: string): never => {
    throw new Error(`${directory}: ${message}`);
  };
  if (loaded.size !== versionSizes[version]) fail(`${loaded.size} chunks, the size of neither version`);
  const marker = version === 'A' ? 'alpha' : 'beta';
  for (const chunk of loaded.chunks()) {
    if (chunk.metadata?.version !== version || !chunk.text.startsWith(`${marker} document `)) {
      fail(`chunk ${chunk.id} of version ${String(chunk.metadata?.version)} in a save of ${version}`);
    }
  }
  // The index agrees with the chunks: every document of the version, and only those, holds its marker.
  if (loaded.index.search(marker, versionSizes[version] + 10).length !== versionSizes[version]) {
    fail(`the index does not find every chunk of version ${version}`);
  }
  if (loaded.index.search(otherVersion(version) === 'A' ? 'alpha' : 'beta', 5).length !== 0) {
    fail(`the index finds chunks of the other version`);
  }
  return version;
}
