import { wordSet } from './words.js';

/**
 * Arabic stop words: Jacques Savoy's list as Lucene's `ArabicAnalyzer` ships it (BSD licence),
 * plus pronouns, demonstratives, relatives, interrogatives and particle compounds. Every entry
 * is already normalised with `normalizeArabic` (bare alef, final yeh, heh for teh marbuta),
 * because stop words are looked up after normalisation; the hamza variants of the original
 * list therefore collapse into one entry each.
 *
 * Left out on purpose, because after normalisation they are spelled like common content
 * words: على (= the name علي), أم (= mother), أمام (= imam), أية (= آية, verse), سوى, أحد,
 * خلف, عبر, ذات.
 */
export const arabicStopWords: ReadonlySet<string> = wordSet(`
  من ومن منها منه في وفي فيها فيه و ف ثم او ب بها به ا اي لا ولا الا لكن ما وما كما فما عن مع اذا
  ان انها انه بان فان وان التي الذي الذين الي عليها عليه اما ايضا كل وكل لم ولم لن ولن هي هو وهي
  وهو فهي فهو انت لك لها له هذه هذا تلك ذلك هناك كانت كان يكون تكون وكانت وكان غير بعض قد نحو بين
  بينما منذ ضمن حيث الان خلال بعد قبل حتي عند عندما لدي جميع انا نحن انتم انتما انتن هم هما هن
  اياه اياها اياهم هؤلاء هذان هاتان هذين هاتين اولئك ذلكم هنا هنالك اللذان اللتان اللذين اللتين
  اللواتي اللاتي اللائي كيف متي اين لماذا ماذا هل بل اذ اذن كي لكي لان حين حينما مثل ليس ليست لست
  كانوا كنت يكونوا لقد وقد فقد سوف يا لو لولا انما مما عما فيما بما لما كلما ممن عمن فانه وانه
  ولكن لذلك بذلك وذلك وهذا وهذه عليهم عليهما فيهم فيهما منهم منهما بهم لهم لهما لنا لي بي عنه عنها
  عنهم معه معها اليه اليها اليهم لديه لديها فوق تحت حول دون وفق ذو ذا اكثر اقل كلا كلتا
`);
