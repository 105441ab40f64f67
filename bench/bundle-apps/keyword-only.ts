// An application that uses only the keyword retriever: what a bundler keeps of @zerda/core for it.
import { KeywordRetriever } from '@zerda/core';

const keyword = new KeywordRetriever();
keyword.add([{ id: 'a', text: 'solar panels turn sunlight into electricity' }]);
export const search = (query: string) => keyword.retrieve(query, { k: 5 });
