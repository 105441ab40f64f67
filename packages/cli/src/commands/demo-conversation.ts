import { ContextEngine, type ContextEngineResult, type ContextRetriever, Reranker } from '@zerda/core';

/** A two-turn conversation: the answer to the first question is recorded, the second is a follow-up. */
export const demoConversation = [
  {
    question: 'Where does the fennec fox live?',
    answer: 'The fennec fox, the zerda, lives in the sand deserts of North Africa.',
  },
  { question: 'Why are its ears so large?' },
] as const;

export interface ConversationTurnReport {
  result: ContextEngineResult;
  /** The answer recorded after this turn (a real application gets it from its language model). */
  recordedAnswer?: string;
}

/**
 * The context engine over the demo's hybrid retriever with the heuristic reranker: each question
 * gets a context within a small budget, with source markers; the recorded answer lets the
 * follow-up question be enriched from the conversation.
 */
export async function runConversationDemo(retriever: ContextRetriever): Promise<ConversationTurnReport[]> {
  const engine = new ContextEngine({
    retriever,
    reranker: new Reranker({ mode: 'heuristic' }),
    k: 8,
    budgets: { low: 400, medium: 600, high: 900 },
  });
  const turns: ConversationTurnReport[] = [];
  for (const turn of demoConversation) {
    const result = await engine.buildContext(turn.question);
    if ('answer' in turn) engine.recordAnswer(turn.answer);
    turns.push({ result, ...('answer' in turn ? { recordedAnswer: turn.answer } : {}) });
  }
  return turns;
}

export function formatConversation(turns: readonly ConversationTurnReport[]): string[] {
  const lines = [
    '',
    'Context engine: a conversation (heuristic reranker, budget by question complexity, in characters)',
  ];
  turns.forEach(({ result, recordedAnswer }, index) => {
    lines.push('', `Q${index + 1}: "${result.question}"`);
    if (result.followUp) {
      lines.push(
        `   follow-up: searched as "${result.retrievalQuery}" (added from the conversation: ${result.enrichment.join(', ')})`,
      );
    }
    lines.push(
      `   ${result.analysis.language}, ${result.analysis.intent}, ${result.analysis.complexity} complexity; ` +
        `${result.chunks.length} chunks, ${result.size} of ${result.budget} characters; ` +
        `guard ${result.guardPassed ? 'passed' : `failed (${result.guardWarnings.join('; ')})`}`,
    );
    for (const line of result.context.split('\n')) if (line.trim() !== '') lines.push(`   | ${line}`);
    if (recordedAnswer) lines.push(`   answer recorded: "${recordedAnswer}"`);
  });
  return lines;
}
