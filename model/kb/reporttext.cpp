#include "model/kb/reporttext.h"

#include "model/kb/literalindex.h"

#include <QByteArray>
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

namespace rankscope {

namespace {

bool isSpace(char c)
{
    return c == ' ' || c == '\t';
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

bool isLower(char c)
{
    return c >= 'a' && c <= 'z';
}

bool isUpper(char c)
{
    return c >= 'A' && c <= 'Z';
}

bool isWordChar(char c)
{
    return isLower(c) || isUpper(c) || isDigit(c) || c == '_';
}

// "> > text" -> "text": a quoted line is read as what it quotes.
QByteArrayView unquote(QByteArrayView s)
{
    while (s.startsWith('>'))
        s = s.sliced(1).trimmed();
    return s;
}

// "- x", "* x", "+ x", "1. x", "2) x" -> "x".
QByteArrayView unbullet(QByteArrayView s)
{
    if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && isSpace(s[1]))
        return s.sliced(2).trimmed();
    qsizetype i = 0;
    while (i < s.size() && isDigit(s[i]))
        ++i;
    if (i > 0 && i + 1 < s.size() && (s[i] == '.' || s[i] == ')') && isSpace(s[i + 1]))
        return s.sliced(i + 2).trimmed();
    return s;
}

bool startsWithWord(QByteArrayView s, QByteArrayView word)
{
    return s.startsWith(word) && (s.size() == word.size() || !isWordChar(s[word.size()]));
}

// Words (space-separated) of `s`: how many are lower-case letters only ("could", "not"), and how
// many are anything else ("Ubuntu", "20.04", "A100-SXM4", "False").
void countWords(QByteArrayView s, int* lowerWords, int* otherWords)
{
    *lowerWords = *otherWords = 0;
    qsizetype i = 0;
    while (i < s.size()) {
        while (i < s.size() && isSpace(s[i]))
            ++i;
        if (i >= s.size()) break;
        bool lower = true;
        while (i < s.size() && !isSpace(s[i])) {
            lower = lower && (isLower(s[i]) || s[i] == ',' || s[i] == '.');
            ++i;
        }
        ++(lower ? *lowerWords : *otherWords);
    }
}

// "2.0.1", "1.24.3", "11.8", "v0.21.0", "2.0.1+cu118".
bool isVersion(QByteArrayView token)
{
    if (token.startsWith('v') || token.startsWith('V')) token = token.sliced(1);
    if (token.isEmpty() || !isDigit(token[0])) return false;
    qsizetype i = 0;
    while (i < token.size() && isDigit(token[i]))
        ++i;
    return i + 1 < token.size() && token[i] == '.' && isDigit(token[i + 1]);
}

// Template wording that survives when the reporter answers around it: instructions and example
// placeholders of GitHub's default bug report and of the common deep-learning projects' issue
// forms, none of them a reporter's own words about the failure.
constexpr std::array<const char*, 16> kTemplatePhrases = {
    "[e.g", // an example placeholder ("[e.g. Ubuntu 22.04]", "(e.g., two nodes)")
    "(e.g",
    "a clear and concise description",
    "steps to reproduce the behavio",
    "if applicable",
    "add any other context",
    "please complete the following",
    "please ask your question here",
    "please fill",
    "please paste",
    "please provide",
    "please describe",
    "did you search",
    "did you read",
    "did you check",
    "you can collect",
};

// Stems of the words in keys of "key: value" lines where a reporter states what happened
// ("Expected behavior:", "Error:"), never a dump's field ("Is debug build:" is one).
constexpr std::array<const char*, 20> kReportKeys = {
    "behavio", "describe", "problem", "issue",   "bug",   "question", "result",
    "observ",  "actual",   "expect",  "symptom", "note",  "update",   "edit",
    "error",   "warn",     "fail",    "except",  "trace", "fatal",
};

// The lines, among the first `count`, that hold template wording (kTemplatePhrases, any case):
// one Aho-Corasick pass over them, not a search per phrase and line.
std::vector<qsizetype> templateWordingLines(QByteArrayView text, const QList<qsizetype>& starts,
                                            qsizetype count)
{
    static const LiteralIndex index = [] {
        QList<QByteArray> phrases;
        for (const char* p : kTemplatePhrases)
            phrases << QByteArray(p);
        return LiteralIndex({phrases}, true);
    }();
    const LineSource lines{starts.size(), [&](qsizetype i) {
                               const qsizetype end =
                                   i + 1 < starts.size() ? starts[i + 1] : text.size();
                               return text.sliced(starts[i], end - starts[i]);
                           }};
    return index.candidateLines(lines, count).front();
}

// `templateWording`: the line holds one of kTemplatePhrases.
bool isScaffold(QByteArrayView body, bool inFence, bool templateWording)
{
    if (!inFence) {
        // A Markdown heading ("### System Info") or a bold label alone ("**To Reproduce**").
        qsizetype hashes = 0;
        while (hashes < body.size() && body[hashes] == '#')
            ++hashes;
        if (hashes > 0 && hashes <= 6 && (hashes == body.size() || isSpace(body[hashes])))
            return true;
        const QByteArrayView item = unbullet(body);
        if (item.startsWith("**")) {
            const qsizetype close = item.indexOf("**", 2);
            if (close > 2) {
                const QByteArrayView rest = item.sliced(close + 2).trimmed();
                if (rest.isEmpty() || rest == ":") return true;
            }
        }
        // A checkbox ("- [x] My own modified scripts"): the template's choices.
        if (item.size() >= 3 && item[0] == '[' && item[2] == ']' &&
            (item[1] == ' ' || item[1] == 'x' || item[1] == 'X'))
            return true;
        // HTML of collapsible sections ("<details>", "<summary>ds_report</summary>").
        if (body.startsWith('<') && body.size() > 1 && (isLower(body[1]) || body[1] == '/'))
            return true;
    }
    return !inFence && templateWording;
}

enum class Field { None, Weak, Strong };

// A line of a version or environment dump, a package list or a config block. Strong: only dumps
// have such lines. Weak: a short "key: value" or "name version" line, a dump's only when its
// neighbours are fields too.
Field fieldShape(QByteArrayView body)
{
    // "[pip3] torch==2.0.1", "[conda] nccl 2.18.3".
    if (body.startsWith("[pip") || body.startsWith("[conda]")) return Field::Strong;
    // A build report's checklist ("[X] NCCL" in `horovodrun --check-build`); outside code blocks
    // a checkbox is the template's (isScaffold).
    if (body.size() > 4 && body[0] == '[' && body[2] == ']' && body[3] == ' ' &&
        (body[1] == ' ' || body[1] == 'x' || body[1] == 'X'))
        return Field::Strong;
    // A JSON config key ('"stage": 3,').
    if (body.startsWith('"') && body.indexOf("\":") > 1) return Field::Strong;
    QByteArray stripped;
    QByteArrayView item = unbullet(body);
    if (item.contains("**") || item.contains('`')) {
        // "**Framework:** PyTorch", "- `Accelerate` version: 0.21.0".
        stripped = item.toByteArray().replace("**", "").replace('`', "");
        item = stripped.trimmed();
    }
    if (item.isEmpty() || !(isWordChar(item[0]) || item[0] == '-')) return Field::None;
    // ds_report's dotted leaders ("cpu_adam ........ [NO] ....... [OKAY]").
    if (const qsizetype dots = item.indexOf("...."); dots > 0 && dots <= 60) {
        qsizetype end = dots;
        while (end < item.size() && item[end] == '.')
            ++end;
        if (end < item.size() && (isSpace(item[end]) || item[end] == '[')) return Field::Strong;
    }
    // A pinned package ("numpy==1.24.3", "torch>=2.1").
    if (const qsizetype equals = item.indexOf('='); equals > 0 && equals + 1 < item.size()) {
        const qsizetype op =
            item[equals + 1] == '=' ? equals
            : (item[equals - 1] == '>' || item[equals - 1] == '<' || item[equals - 1] == '~')
                ? equals - 1
                : -1;
        if (op > 0 && !item.first(op).contains(' ') && isVersion(item.sliced(op + 2)))
            return Field::Strong;
    }

    // "key: value" (or "key:" heading a group of fields).
    qsizetype colon = -1;
    for (qsizetype i = 0; i < item.size() && i <= 48; ++i)
        if (item[i] == ':' && (i + 1 == item.size() || isSpace(item[i + 1]))) {
            colon = i;
            break;
        }
    if (colon > 0) {
        const QByteArrayView key = item.first(colon).trimmed();
        const QByteArrayView value = item.sliced(colon + 1).trimmed();
        int keyLower = 0, keyOther = 0;
        countWords(key, &keyLower, &keyOther);
        if (keyLower + keyOther > 8 || key.contains('[') || key.contains('"') ||
            key.contains('|') || key.contains("://"))
            return Field::None;
        const QByteArray keyText = key.toByteArray().toLower();
        for (const QByteArray& word : keyText.split(' '))
            for (const char* stem : kReportKeys)
                if (word.startsWith(stem)) return Field::None;
        if (keyText.contains("version") && !value.isEmpty()) return Field::Strong;
        int valueLower = 0, valueOther = 0;
        countWords(value, &valueLower, &valueOther);
        if (value.size() <= 120 && valueLower <= 3 && (valueOther >= 1 || valueLower <= 1))
            return Field::Weak;
        return Field::None;
    }
    // "name  version" columns of pip and conda lists, "Python 3.6.5".
    const qsizetype space = item.indexOf(' ');
    if (space > 0) {
        const QByteArrayView rest = item.sliced(space).trimmed();
        const qsizetype next = rest.indexOf(' ');
        const QByteArrayView second = next < 0 ? rest : rest.first(next);
        int lowerWords = 0, otherWords = 0;
        countWords(item, &lowerWords, &otherWords);
        if (isVersion(second) && lowerWords + otherWords <= 5)
            return item.contains("  ") ? Field::Strong : Field::Weak;
    }
    return Field::None;
}

// A shell command: a launcher or package tool and its arguments, a prompt, or environment
// assignments before a command ("NCCL_DEBUG=INFO torchrun ...").
bool commandShaped(QByteArrayView body)
{
    // A command quoted as inline code ("`deepspeed --module ... \") is still a command.
    if (body.startsWith('`') && !body.startsWith("``")) body = body.sliced(1);
    if (body.startsWith("$ ") || body.startsWith("#!")) return true;
    // A launcher's option that the command goes on after ("--save_path ./ckpt \"), the head
    // being one no list below names ("uv run", "ray job submit", "bash train.sh").
    if (body.startsWith("--") && body.size() > 2 && isLower(body[2]) && body.endsWith('\\'))
        return true;
    // A prompt the reporter copied with the command ("(env) user@host:~/dir$ torchrun ...",
    // "root@node1:/work# mpirun ...", "[user@host dir]$ ..."): what follows it was typed.
    QByteArrayView prompt = body;
    if (prompt.startsWith('(')) {
        const qsizetype close = prompt.indexOf(") ");
        if (close > 0) prompt = prompt.sliced(close + 2);
    }
    const qsizetype space = prompt.startsWith('[') ? prompt.indexOf("]") : prompt.indexOf(' ');
    if (space > 1 && prompt.first(space).contains('@')) {
        const qsizetype end = prompt.startsWith('[') ? space + 1 : space - 1;
        if (end < prompt.size() && (prompt[end] == '$' || prompt[end] == '#') &&
            end + 2 < prompt.size() && prompt[end + 1] == ' ')
            return true;
    }
    for (const char* tool : {"python", "python3", "torchrun", "deepspeed", "accelerate", "mpirun",
                             "mpiexec", "horovodrun", "srun", "sbatch", "pip", "pip3", "conda",
                             "docker", "nvidia-smi", "git", "export", "sudo"})
        if (startsWithWord(body, tool) && body.size() > qsizetype(strlen(tool)) &&
            body[qsizetype(strlen(tool))] == ' ')
            return true;
    qsizetype i = 0;
    while (i < body.size() && (isUpper(body[i]) || isDigit(body[i]) || body[i] == '_'))
        ++i;
    if (i > 0 && i < body.size() && body[i] == '=') {
        const qsizetype space = body.indexOf(' ', i);
        if (space > 0 && space + 1 < body.size()) return true;
    }
    return false;
}

// The kind of a source line a Rich traceback (Lightning, NeMo, typer) quotes inside its box,
// after an optional "[rank0]: " prefix: the lines around the failing one ("│   1525 │   # call
// ...") are code, the failing one ("│ ❱ 1528 │   if ...") is what happened, as a plain
// traceback's quoted line. None for any other line.
std::optional<ReportLine> richTracebackSource(QByteArrayView body)
{
    static constexpr QByteArrayView kBar = "\xe2\x94\x82";   // U+2502 │
    static constexpr QByteArrayView kArrow = "\xe2\x9d\xb1"; // U+2771 ❱
    // A rank prefix of torchrun's --tee or of Ray's worker logs.
    if (body.startsWith('[')) {
        const qsizetype close = body.indexOf("]:");
        if (close < 0 || close > 16) return std::nullopt;
        body = body.sliced(close + 2).trimmed();
    }
    if (!body.startsWith(kBar)) return std::nullopt;
    body = body.sliced(kBar.size()).trimmed();
    const bool failed = body.startsWith(kArrow);
    if (failed) body = body.sliced(kArrow.size()).trimmed();
    qsizetype digits = 0;
    while (digits < body.size() && isDigit(body[digits]))
        ++digits;
    if (digits == 0 || !body.sliced(digits).trimmed().startsWith(kBar)) return std::nullopt;
    return failed ? ReportLine::Output : ReportLine::Code;
}

// Python source: statements, calls, block headers.
bool sourceShaped(QByteArrayView body, bool inFence)
{
    for (const char* keyword :
         {"import", "def", "class", "raise", "assert", "return", "lambda", "yield", "await"})
        if (startsWithWord(body, keyword) && body.size() > qsizetype(strlen(keyword)))
            return keyword[0] != 'r' || inFence || body.contains('(');
    if (body.startsWith("from ") && body.contains(" import ")) return true;
    if (body.startsWith(">>> ")) return true;
    if (body.startsWith('@')) { // a decorator, not a mention ("@user I see ...")
        qsizetype i = 1;
        while (i < body.size() && (isWordChar(body[i]) || body[i] == '.'))
            ++i;
        if (i > 1 && (i == body.size() || body[i] == '(')) return true;
    }
    // Block headers end with a colon ("for batch in loader:", "with torch.no_grad():").
    for (const char* keyword :
         {"for", "if", "elif", "else", "with", "while", "try", "except", "finally", "async"})
        if (startsWithWord(body, keyword) && body.endsWith(':')) return true;
    // An assignment ("model = DDP(model)", "x=torch.randn(3)") or a call alone on its line.
    qsizetype i = 0;
    while (i < body.size() && (isWordChar(body[i]) || body[i] == '.'))
        ++i;
    if (i == 0 || isDigit(body[0])) return false;
    if (i < body.size() && body[i] == '[') { // "os.environ['X'] = ..."
        const qsizetype close = body.indexOf(']', i);
        if (close < 0) return false;
        i = close + 1;
    }
    const QByteArrayView rest = body.sliced(i);
    if (rest.startsWith('(')) {
        const char last = body.back();
        return last == ')' || last == '(' || last == ',' || last == ':';
    }
    for (const char* op : {" = ", " += ", " -= ", " *= ", " /= "})
        if (rest.startsWith(op)) return true;
    if (rest.startsWith('=') && !rest.startsWith("==") && rest.size() > 1) {
        const char first = rest[1];
        return first == '(' || first == '[' || first == '{' || first == '"' || first == '\'' ||
               rest.contains('(');
    }
    // Inside a code block, the lines of a call or literal spread over lines.
    if (inFence) {
        const char last = body.back();
        if (last == '(' || last == '[' || last == '{' || last == ',') return true;
        bool closers = true;
        for (char c : body)
            closers = closers && (c == ')' || c == ']' || c == '}' || c == ',' || c == ':');
        if (closers) return true;
    }
    return false;
}

} // namespace

qsizetype tracebackFramePathEnd(QByteArrayView line)
{
    return line.trimmed().startsWith("File \"") ? line.indexOf("\", line ") : -1;
}

QList<ReportLine> reportLineKinds(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                  qsizetype lineLimit)
{
    const qsizetype count = std::clamp<qsizetype>(lineLimit, 0, lineStarts.size());
    QList<ReportLine> kinds(count, ReportLine::Prose);
    std::vector<Field> fields(size_t(count), Field::None);
    std::vector<bool> blank(size_t(count), false);
    // Per line, the code block it is in (-1: none); per block, its non-empty lines and fields.
    struct BlockCount {
        qsizetype lines = 0, fields = 0;
    };
    std::vector<qsizetype> block(size_t(count), -1);
    std::vector<BlockCount> blocks;
    bool inFence = false, inComment = false, continued = false, titleSeen = false;
    bool afterFrame = false;
    const std::vector<qsizetype> templateLines = templateWordingLines(text, lineStarts, count);
    auto nextTemplateLine = templateLines.begin();
    for (qsizetype n = 0; n < count; ++n) {
        const qsizetype end = n + 1 < lineStarts.size() ? lineStarts[n + 1] : text.size();
        const QByteArrayView line = text.sliced(lineStarts[n], end - lineStarts[n]).trimmed();
        if (line.isEmpty()) {
            blank[n] = true;
            continued = false;
            continue;
        }
        if (!titleSeen) { // the title is the reporter's summary, whatever its markup
            titleSeen = true;
            continue;
        }
        ReportLine& kind = kinds[n];
        // HTML comments hold a template's instructions; GitHub does not show them.
        if (inComment || line.startsWith("<!--")) {
            const qsizetype close = line.lastIndexOf("-->");
            inComment = close < 0;
            if (close < 0 || line.sliced(close + 3).trimmed().isEmpty()) {
                kind = ReportLine::Scaffold;
                continue;
            }
        }
        if (line.startsWith("```") || line.startsWith("~~~")) {
            inFence = !inFence;
            if (inFence) blocks.emplace_back();
            kind = ReportLine::Scaffold;
            continued = false;
            continue;
        }
        const QByteArrayView body = unquote(line);
        if (body.isEmpty()) continue;
        if (inFence) {
            block[n] = qsizetype(blocks.size()) - 1;
            ++blocks.back().lines;
        }
        // A shell command goes on after a line that ends with a backslash (a backtick in
        // PowerShell, a caret in cmd.exe).
        const bool continues = body.endsWith('\\') || body.endsWith(" `") || body.endsWith(" ^");
        if (continued) {
            kind = ReportLine::Command;
            continued = continues;
            continue;
        }
        // The source line a traceback quotes under a frame is where the program failed: output.
        const bool quotedByTraceback = afterFrame;
        afterFrame = tracebackFramePathEnd(body) >= 0;
        if (quotedByTraceback) {
            if (body.startsWith("import ") ||
                (body.startsWith("from ") && body.contains(" import ")))
                kind = ReportLine::Import;
            else if (inFence)
                kind = ReportLine::Output;
            continue;
        }
        if (const std::optional<ReportLine> source = richTracebackSource(body)) {
            kind = *source;
            continue;
        }
        while (nextTemplateLine != templateLines.end() && *nextTemplateLine < n)
            ++nextTemplateLine;
        const bool templateWording =
            nextTemplateLine != templateLines.end() && *nextTemplateLine == n;
        if (isScaffold(body, inFence, templateWording)) {
            kind = ReportLine::Scaffold;
            continue;
        }
        // A comment in code is the reporter's words ("# hangs here").
        if (inFence && (body.startsWith("# ") || body.startsWith("// "))) continue;
        const Field field = fieldShape(body);
        if (inFence && field != Field::None) ++blocks.back().fields;
        if (field == Field::Strong) {
            kind = ReportLine::Environment;
            continue;
        }
        if (commandShaped(body)) {
            kind = ReportLine::Command;
            continued = continues;
            continue;
        }
        if (sourceShaped(body, inFence)) {
            kind = ReportLine::Code;
            continue;
        }
        fields[n] = field;
        if (inFence) kind = ReportLine::Output;
    }
    // A weak field is a dump's when it is among fields: inside a code block, when fields are
    // most of the block's lines (a log may print a few "key: value" lines); outside, when the
    // nearest non-empty line before or after it is a field.
    const auto isField = [&](qsizetype i) {
        return kinds[i] == ReportLine::Environment || fields[i] != Field::None;
    };
    std::vector<bool> dump(size_t(count), false);
    for (qsizetype n = 0; n < count; ++n) {
        if (fields[n] != Field::Weak) continue;
        if (block[n] >= 0) {
            const BlockCount& b = blocks[size_t(block[n])];
            dump[n] = 2 * b.fields > b.lines;
            continue;
        }
        qsizetype before = n - 1, after = n + 1;
        while (before >= 0 && blank[before])
            --before;
        while (after < count && blank[after])
            ++after;
        dump[n] = (before >= 0 && block[before] < 0 && isField(before)) ||
                  (after < count && block[after] < 0 && isField(after));
    }
    for (qsizetype n = 0; n < count; ++n)
        if (dump[n]) kinds[n] = ReportLine::Environment;
    return kinds;
}

} // namespace rankscope
