#include "model/trace/logreader.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <algorithm>
#include <array>
#include <cstring>
#include <map>

namespace rankscope {

namespace {

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// Reads exactly `n` digits at `p`; -1 when they are not all digits.
int digits(QByteArrayView s, qsizetype p, int n)
{
    if (p < 0 || p + n > s.size()) return -1;
    int v = 0;
    for (int k = 0; k < n; ++k) {
        const char c = s[p + k];
        if (!isDigit(c)) return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

// Log clocks outside this range are corrupt text; it also keeps ns since epoch in int64.
bool plausibleYear(int y)
{
    return y >= 1970 && y <= 2200;
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t daysFromCivil(int y, int m, int d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

// "HH:MM:SS" then an optional fraction of any length; returns ns since midnight or -1.
std::int64_t timeOfDay(QByteArrayView s, qsizetype p)
{
    const int h = digits(s, p, 2), mi = digits(s, p + 3, 2), sec = digits(s, p + 6, 2);
    if (h < 0 || mi < 0 || sec < 0 || s[p + 2] != ':' || s[p + 5] != ':') return -1;
    if (h > 23 || mi > 59 || sec > 60) return -1;
    std::int64_t ns = (std::int64_t(h) * 3600 + mi * 60 + sec) * 1'000'000'000LL;
    qsizetype q = p + 8;
    if (q < s.size() && (s[q] == '.' || s[q] == ',')) {
        std::int64_t scale = 100'000'000LL;
        for (++q; q < s.size() && isDigit(s[q]); ++q) {
            ns += (s[q] - '0') * scale;
            scale /= 10;
        }
    }
    return ns;
}

std::string_view view(QByteArrayView b)
{
    return std::string_view(b.data(), std::size_t(b.size()));
}

std::string str(const QString& s)
{
    return s.toStdString();
}

bool contains(std::string_view s, std::string_view what)
{
    return s.find(what) != std::string_view::npos;
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// Splits "A=1, B=[2, 3], C=T(x, y)" at top-level commas into key/value pairs.
std::vector<std::pair<std::string, std::string>> keyValues(std::string_view body)
{
    std::vector<std::pair<std::string, std::string>> out;
    int depth = 0;
    std::size_t begin = 0;
    for (std::size_t k = 0; k <= body.size(); ++k) {
        const char c = k < body.size() ? body[k] : ',';
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') --depth;
        if (c != ',' || depth > 0) continue;
        const std::string_view item = trimmed(body.substr(begin, k - begin));
        begin = k + 1;
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        out.emplace_back(std::string(trimmed(item.substr(0, eq))),
                         std::string(trimmed(item.substr(eq + 1))));
    }
    return out;
}

// The text between the '(' at `open` and its matching ')', or npos-length when unbalanced.
std::string_view parenBody(std::string_view s, std::size_t open)
{
    int depth = 0;
    for (std::size_t k = open; k < s.size(); ++k) {
        if (s[k] == '(') ++depth;
        if (s[k] == ')' && --depth == 0) return s.substr(open + 1, k - open - 1);
    }
    return s.substr(open + 1); // cut line: keep what is there
}

const QSet<QString>& environmentKeys()
{
    static const QSet<QString> keys = {
        QStringLiteral("MASTER_ADDR"),          QStringLiteral("MASTER_PORT"),
        QStringLiteral("WORLD_SIZE"),           QStringLiteral("RANK"),
        QStringLiteral("LOCAL_RANK"),           QStringLiteral("LOCAL_WORLD_SIZE"),
        QStringLiteral("GROUP_RANK"),           QStringLiteral("NODE_RANK"),
        QStringLiteral("CUDA_VISIBLE_DEVICES"),
    };
    return keys;
}

} // namespace

// Fills one RankLog's line index and facts, line by line.
class RankLogBuilder {
public:
    explicit RankLogBuilder(RankLog& log) : m_log(log) {}

    void addLine(std::int64_t start, std::int64_t end, int number, QByteArrayView content,
                 int yearHint)
    {
        const int index = m_log.lineCount();
        m_log.m_start.push_back(start);
        m_log.m_end.push_back(end);
        m_log.m_number.push_back(number);
        if (content.size() > LogReader::kParseLimitBytes) {
            ++m_log.longLines;
            content = content.first(LogReader::kParseLimitBytes);
        }
        bool hasDate = false;
        int year = 0;
        const std::optional<std::int64_t> ts =
            LogReader::parseTimestamp(content, m_year ? m_year : yearHint, &hasDate, &year);
        if (year) m_year = year;
        m_log.m_timeNs.push_back(ts.value_or(-1));
        m_log.m_timeHasDate.push_back(ts && hasDate);
        parse(index, content, ts.has_value());
    }

    void finish() { closeException(); }

private:
    void closeException()
    {
        if (m_state != State::None && !m_current.type.empty())
            m_log.m_exceptions.push_back(std::move(m_current));
        m_current = LogException{};
        m_state = State::None;
    }

    // True for the lines that only frame a traceback (its header, File and code lines).
    bool traceback(int index, std::string_view line, bool timestamped)
    {
        const std::string_view t = trimmed(line);
        if (t == "Traceback (most recent call last):") {
            closeException();
            m_state = State::Frames;
            m_current.firstLine = index;
            return true;
        }
        if (m_state == State::None) return false;
        if (m_state == State::Frames) {
            if (t.empty()) return true;
            if (line.front() == ' ' || line.front() == '\t') {
                static const QRegularExpression frame(
                    QStringLiteral("^File \"([^\"]*)\", line (\\d+)(?:, in (.*))?$"));
                const QRegularExpressionMatch m =
                    frame.match(QString::fromUtf8(t.data(), qsizetype(t.size())));
                if (m.hasMatch())
                    m_current.frames.push_back(
                        {str(m.captured(1)), m.captured(2).toInt(), str(m.captured(3))});
                return true;
            }
            static const QRegularExpression exc(
                QStringLiteral("^([A-Za-z_][\\w.]*)(?::\\s?(.*))?$"));
            const QRegularExpressionMatch m =
                exc.match(QString::fromUtf8(t.data(), qsizetype(t.size())));
            if (!m.hasMatch() || timestamped) { // not an exception line: the traceback was cut
                m_current.type = m_current.frames.empty() ? std::string() : "(traceback cut)";
                m_current.lastLine = index - 1;
                closeException();
                return false;
            }
            m_current.type = str(m.captured(1));
            m_current.message = str(m.captured(2));
            m_current.lastLine = index;
            m_state = State::Message;
            m_messageLines = 0;
            return false; // its text may hold facts (fingerprints, NCCL errors)
        }
        // State::Message: a multi-line message continues until something else starts.
        const bool ends = timestamped || t.empty() || line.front() == '[' ||
                          t.starts_with("During handling") ||
                          t.starts_with("The above exception") || t.starts_with("=====") ||
                          contains(line, " NCCL ") || ++m_messageLines > 40;
        if (ends) {
            closeException();
            return false;
        }
        m_current.message += '\n';
        m_current.message += std::string(line);
        m_current.lastLine = index;
        return false;
    }

    void fact(LogFactKind kind, int index, std::vector<std::pair<std::string, std::string>> fields)
    {
        m_log.m_facts.push_back(LogFact{kind, index, std::move(fields)});
    }

    void noteWorldSize(const std::string& v)
    {
        bool ok = false;
        const int n = QString::fromStdString(v).toInt(&ok);
        if (ok && n > 0 && n < 10'000'000)
            m_log.worldSize = std::max(m_log.worldSize.value_or(0), n);
    }

    void nccl(int index, std::string_view bytes, const QString& line)
    {
        static const QRegularExpression prefix(
            QStringLiteral("(?:^|\\s)([\\w.\\-]+):(\\d+):(\\d+) \\[(\\d+)\\] (?:\\S+:\\d+ )?NCCL "
                           "(INFO|WARN) ?(.*)$"));
        // The prefix names the host: needed once, and for WARN and init lines.
        const bool warn = contains(bytes, "NCCL WARN");
        const bool isInit = contains(bytes, " nranks ");
        const QRegularExpressionMatch p =
            m_log.host.empty() || warn || isInit ? prefix.match(line) : QRegularExpressionMatch();
        qsizetype level = line.indexOf(QLatin1String("NCCL INFO "));
        if (level < 0) level = line.indexOf(QLatin1String("NCCL WARN "));
        const QString body = level >= 0 ? line.mid(level + 10) : line;
        std::vector<std::pair<std::string, std::string>> origin;
        if (p.hasMatch()) {
            if (m_log.host.empty()) m_log.host = str(p.captured(1));
            origin = {{"host", str(p.captured(1))},
                      {"pid", str(p.captured(2))},
                      {"tid", str(p.captured(3))},
                      {"cudaDev", str(p.captured(4))}};
        }
        if (p.hasMatch() && p.captured(5) == QLatin1String("WARN")) {
            auto f = origin;
            f.emplace_back("text", str(body));
            fact(LogFactKind::NcclWarn, index, std::move(f));
        }
        static const QRegularExpression version(QStringLiteral("NCCL version (\\S+)"));
        if (const auto m =
                contains(bytes, "NCCL version") ? version.match(body) : QRegularExpressionMatch();
            m.hasMatch()) {
            auto f = origin;
            f.emplace_back("version", str(m.captured(1)));
            static const QRegularExpression cuda(QStringLiteral("\\+cuda(\\d+(?:\\.\\d+)*)"));
            if (const auto c = cuda.match(m.captured(1)); c.hasMatch())
                f.emplace_back("cuda", str(c.captured(1)));
            fact(LogFactKind::NcclVersion, index, std::move(f));
            return;
        }
        static const QRegularExpression init(QStringLiteral("\\brank (\\d+) nranks (\\d+)\\b"));
        if (isInit && init.match(body).hasMatch()) {
            std::vector<std::pair<std::string, std::string>> f;
            static const QRegularExpression pair(
                QStringLiteral("\\b(comm|rank|nranks|cudaDev|nvmlDev|busId|commId|localRank|"
                               "localRanks|nNodes)\\s+(\\S+)"));
            auto it = pair.globalMatch(body);
            while (it.hasNext()) {
                const auto m = it.next();
                f.emplace_back(str(m.captured(1)), str(m.captured(2)));
            }
            if (body.contains(QLatin1String("Init COMPLETE")))
                f.emplace_back("status", "complete");
            else if (body.contains(QLatin1String("Init START")))
                f.emplace_back("status", "start");
            for (const auto& kv : origin)
                if (kv.first == "host") f.push_back(kv);
            noteWorldSize(LogFact{LogFactKind::NcclInit, index, f}.value("nranks"));
            fact(LogFactKind::NcclInit, index, std::move(f));
            return;
        }
        static const QRegularExpression net(QStringLiteral("NET/(\\w+)\\s*:\\s*Using\\s+(.*)$"));
        if (const auto m = contains(bytes, "NET/") ? net.match(body) : QRegularExpressionMatch();
            m.hasMatch()) {
            fact(LogFactKind::NcclNetInterface, index,
                 {{"transport", str(m.captured(1))}, {"using", str(m.captured(2).trimmed())}});
            return;
        }
        static const QRegularExpression ifname(
            QStringLiteral("NCCL_SOCKET_IFNAME set (?:by environment )?to (\\S+)"));
        if (const auto m =
                contains(bytes, "IFNAME") ? ifname.match(body) : QRegularExpressionMatch();
            m.hasMatch()) {
            fact(LogFactKind::NcclNetInterface, index,
                 {{"NCCL_SOCKET_IFNAME", str(m.captured(1))}});
            return;
        }
        static const QRegularExpression coll(QStringLiteral("^\\s*(\\w+): opCount (\\w+)(.*)$"));
        if (const auto m =
                contains(bytes, "opCount") ? coll.match(body) : QRegularExpressionMatch();
            m.hasMatch()) {
            std::vector<std::pair<std::string, std::string>> f = {{"op", str(m.captured(1))},
                                                                  {"opCount", str(m.captured(2))}};
            static const QRegularExpression pair(QStringLiteral(
                "\\b(sendbuff|recvbuff|count|datatype|op|root|comm|stream)\\s+(\\S+)"));
            auto it = pair.globalMatch(m.captured(3));
            while (it.hasNext()) {
                const auto kv = it.next();
                f.emplace_back(str(kv.captured(1)), str(kv.captured(2)));
            }
            static const QRegularExpression nranks(QStringLiteral("\\[nranks=(\\d+)\\]"));
            if (const auto n = nranks.match(m.captured(3)); n.hasMatch())
                f.emplace_back("nranks", str(n.captured(1)));
            fact(LogFactKind::NcclColl, index, std::move(f));
        }
    }

    void parse(int index, QByteArrayView content, bool timestamped)
    {
        const std::string_view line = view(content);
        if (traceback(index, line, timestamped)) return;
        if (line.empty()) return;

        const bool hasNccl = contains(line, "NCCL");
        QString text;
        const auto qtext = [&]() -> const QString& {
            if (text.isNull()) text = QString::fromUtf8(content);
            return text;
        };
        if (hasNccl && (contains(line, "NCCL INFO") || contains(line, "NCCL WARN") ||
                        contains(line, "NCCL version")))
            nccl(index, line, qtext());

        bool structured = false;
        if (const std::size_t w = line.find("Work");
            w != std::string_view::npos && contains(line, "SeqNum=")) {
            const std::size_t open = line.find('(', w);
            if (open != std::string_view::npos) {
                auto f = keyValues(parenBody(line, open));
                f.insert(f.begin(), {"work", std::string(line.substr(w, open - w))});
                static const QRegularExpression ranFor(
                    QStringLiteral("ran for (\\d+) milliseconds"));
                if (const auto m = ranFor.match(qtext()); m.hasMatch())
                    f.emplace_back("ran_for_ms", str(m.captured(1)));
                static const QRegularExpression who(QStringLiteral("\\[Rank (\\d+)\\]"));
                if (const auto m = who.match(qtext()); m.hasMatch())
                    f.emplace_back("reporting_rank", str(m.captured(1)));
                if (contains(line, "timeout") || contains(line, "Timeout"))
                    f.emplace_back(
                        "timed_out",
                        contains(line, "timing out") || contains(line, "timed out") ? "true" : "");
                fact(LogFactKind::Watchdog, index, std::move(f));
                structured = true;
            }
        }
        for (std::size_t at = line.find("CollectiveFingerPrint("); at != std::string_view::npos;
             at = line.find("CollectiveFingerPrint(", at + 1)) {
            auto f = keyValues(parenBody(line, at + std::strlen("CollectiveFingerPrint")));
            // "Rank 1 is running collective: CollectiveFingerPrint(...)" names whose it is.
            static const QRegularExpression who(QStringLiteral(
                "Rank (\\d+) is running (?:collective|inconsistent collective): ?$"));
            const QString before = QString::fromUtf8(line.data(), qsizetype(at));
            if (const auto m = who.match(before.right(64)); m.hasMatch())
                f.emplace_back("of_rank", str(m.captured(1)));
            fact(LogFactKind::Fingerprint, index, std::move(f));
            structured = true;
        }
        if (!structured && contains(line, "=")) environment(index, qtext());
        // Versions are printed as "torch=2.1", "torch==2.1", "PyTorch version: 2.1", "CUDA 12.1".
        const bool torchVersion =
            contains(line, "orch") && (contains(line, "ersion") || contains(line, "orch="));
        const bool cudaVersion = (contains(line, "CUDA") || contains(line, "cuda")) &&
                                 (contains(line, "ersion") || contains(line, "CUDA=") ||
                                  contains(line, "CUDA ") || contains(line, "cuda="));
        if (torchVersion || cudaVersion) versions(index, qtext());
        if (contains(line, "ignal") || contains(line, "SIG")) signal(index, qtext());
        if (contains(line, "step") || contains(line, "Step") || contains(line, "iter"))
            step(index, qtext());
        static const QRegularExpression hostKey(
            QStringLiteral("\\bhost(?:name)?\\s*[=:]\\s*([\\w.\\-]+)"));
        if (m_log.host.empty() && contains(line, "host"))
            if (const auto m = hostKey.match(qtext()); m.hasMatch())
                m_log.host = str(m.captured(1));
    }

    void environment(int index, const QString& line)
    {
        static const QRegularExpression pair(QStringLiteral(
            "(?<![\\w.\\-/])([A-Za-z_][\\w.]*)=(\"[^\"]*\"|'[^']*'|[^\\s,;()\\[\\]]+)"));
        std::vector<std::pair<std::string, std::string>> f;
        bool known = false;
        auto it = pair.globalMatch(line);
        while (it.hasNext()) {
            const auto m = it.next();
            QString value = m.captured(2);
            if (value.size() >= 2 &&
                (value.front() == QLatin1Char('"') || value.front() == QLatin1Char('\'')))
                value = value.mid(1, value.size() - 2);
            const QString key = m.captured(1);
            known |= environmentKeys().contains(key) || key.startsWith(QLatin1String("NCCL_")) ||
                     key.startsWith(QLatin1String("TORCH_"));
            f.emplace_back(str(key), str(value));
        }
        if (f.size() < 2 && !known) return;
        std::vector<std::pair<std::string, std::string>> derived;
        for (const auto& [k, v] : f) {
            const QString key = QString::fromStdString(k).toLower();
            if (key == QLatin1String("world_size")) noteWorldSize(v);
            if (key == QLatin1String("master")) {
                // master=host:port, as launch scripts print it.
                const std::size_t colon = v.rfind(':');
                if (colon != std::string::npos) {
                    derived.emplace_back("master_addr", v.substr(0, colon));
                    derived.emplace_back("master_port", v.substr(colon + 1));
                }
            }
            if ((key == QLatin1String("host") || key == QLatin1String("hostname")) &&
                m_log.host.empty())
                m_log.host = v;
        }
        f.insert(f.end(), derived.begin(), derived.end());
        fact(LogFactKind::Environment, index, std::move(f));
    }

    void versions(int index, const QString& line)
    {
        static const QRegularExpression torch(
            QStringLiteral(
                "\\b(?:torch|pytorch)(?:\\.__version__| "
                "version|_version)?\\s*(?:={1,2}|:|\\s)\\s*v?(\\d+\\.\\d+(?:\\.\\d+)?[\\w.+]*)"),
            QRegularExpression::CaseInsensitiveOption);
        static const QRegularExpression cuda(
            QStringLiteral("\\bCUDA(?: version|_VERSION| "
                           "runtime)?\\s*(?:=|:|\\s)\\s*v?(\\d+\\.\\d+(?:\\.\\d+)?)"),
            QRegularExpression::CaseInsensitiveOption);
        if (const auto m = torch.match(line); m.hasMatch())
            fact(LogFactKind::Version, index,
                 {{"component", "torch"}, {"version", str(m.captured(1))}});
        if (const auto m = cuda.match(line); m.hasMatch())
            fact(LogFactKind::Version, index,
                 {{"component", "cuda"}, {"version", str(m.captured(1))}});
    }

    void signal(int index, const QString& line)
    {
        static const QRegularExpression numbered(QStringLiteral(
            "[Ss]ignal\\s+(\\d+)\\s*\\((SIG[A-Z0-9]+)\\)(?:\\s+received by PID\\s+(\\d+))?"));
        static const QRegularExpression named(QStringLiteral(
            "\\b(SIG(?:TERM|KILL|SEGV|ABRT|BUS|FPE|ILL|INT|HUP|PIPE|USR1|USR2|QUIT))\\b"));
        if (const auto m = numbered.match(line); m.hasMatch()) {
            std::vector<std::pair<std::string, std::string>> f = {{"signal", str(m.captured(2))},
                                                                  {"number", str(m.captured(1))}};
            if (m.hasCaptured(3)) f.emplace_back("pid", str(m.captured(3)));
            fact(LogFactKind::Signal, index, std::move(f));
        } else if (const auto n = named.match(line); n.hasMatch()) {
            fact(LogFactKind::Signal, index, {{"signal", str(n.captured(1))}});
        }
    }

    void step(int index, const QString& line)
    {
        static const QRegularExpression stepLine(
            // DDP's logger prints "[before iteration N]": a step that has not run yet.
            QStringLiteral("(?<![\\w\\-])(?<!before )(?:step|iter(?:ation)?)[\\s:=#]*(\\d+)\\b"),
            QRegularExpression::CaseInsensitiveOption);
        if (const auto m = stepLine.match(line); m.hasMatch()) {
            bool ok = false;
            const int n = m.captured(1).toInt(&ok);
            if (ok) m_log.m_steps.push_back({n, index});
        }
    }

    enum class State { None, Frames, Message };
    RankLog& m_log;
    State m_state = State::None;
    LogException m_current;
    int m_messageLines = 0;
    int m_year = 0;
};

std::optional<std::int64_t> LogReader::parseTimestamp(QByteArrayView s, int yearHint, bool* hasDate,
                                                      int* year)
{
    *hasDate = false;
    qsizetype p = 0;
    if (p < s.size() && s[p] == '[') ++p;
    // ISO / Python logging / NCCL: 2026-12-02 13:41:34.806 or 2026-12-02T13:41:34
    const int y = digits(s, p, 4);
    if (y >= 0 && p + 19 <= s.size() && s[p + 4] == '-' && s[p + 7] == '-' &&
        (s[p + 10] == ' ' || s[p + 10] == 'T')) {
        const int mo = digits(s, p + 5, 2), d = digits(s, p + 8, 2);
        const std::int64_t tod = timeOfDay(s, p + 11);
        if (plausibleYear(y) && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && tod >= 0) {
            *hasDate = true;
            if (year) *year = y;
            return daysFromCivil(y, mo, d) * 86'400'000'000'000LL + tod;
        }
        return std::nullopt;
    }
    // glog / c10 logging: I20261202 13:35:55.418524 or [E1218 20:27:21.426415540 ...]
    if (p < s.size() && (s[p] == 'I' || s[p] == 'W' || s[p] == 'E' || s[p] == 'F')) {
        const qsizetype q = p + 1;
        int gy = digits(s, q, 4), mo = -1, d = -1;
        qsizetype t = -1;
        if (gy > 0 && digits(s, q + 4, 4) >= 0 && q + 8 < s.size() && s[q + 8] == ' ') {
            mo = digits(s, q + 4, 2);
            d = digits(s, q + 6, 2);
            t = q + 9;
        } else if (digits(s, q, 4) >= 0 && q + 4 < s.size() && s[q + 4] == ' ') {
            gy = yearHint;
            mo = digits(s, q, 2);
            d = digits(s, q + 2, 2);
            t = q + 5;
        }
        if (t < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || t + 8 > s.size()) return std::nullopt;
        const std::int64_t tod = timeOfDay(s, t);
        if (tod < 0) return std::nullopt;
        if (!plausibleYear(gy)) return tod;
        *hasDate = true;
        if (year) *year = gy;
        return daysFromCivil(gy, mo, d) * 86'400'000'000'000LL + tod;
    }
    return std::nullopt;
}

std::optional<int> LogReader::rankTag(QByteArrayView line, qsizetype* contentStart)
{
    *contentStart = 0;
    const auto number = [&](qsizetype p, qsizetype* end) -> int {
        qsizetype q = p;
        int v = 0;
        while (q < line.size() && isDigit(line[q]) && q - p < 7)
            v = v * 10 + (line[q++] - '0');
        *end = q;
        return q > p ? v : -1;
    };
    const auto after = [&](qsizetype p, const char* tail) {
        const auto n = qsizetype(std::strlen(tail));
        return p + n <= line.size() && std::memcmp(line.data() + p, tail, std::size_t(n)) == 0;
    };
    if (line.startsWith("[rank") || line.startsWith("[default")) {
        qsizetype end = 0;
        const int r = number(line.startsWith("[rank") ? 5 : 8, &end);
        if (r >= 0 && after(end, "]:")) {
            *contentStart = end + 2;
            return r;
        }
    }
    if (line.startsWith("[")) {
        // mpirun --tag-output: [1,3]<stderr>: (jobid,rank) or [3]<stdout>:
        qsizetype end = 0;
        int r = number(1, &end);
        if (r >= 0 && after(end, ",")) r = number(end + 1, &end);
        if (r >= 0 && (after(end, "]<stderr>:") || after(end, "]<stdout>:"))) {
            *contentStart = end + 10;
            return r;
        }
    }
    // Python logging with the rank in the record: "2026-12-02 13:41:34.806 [rank3] INFO ..."
    bool hasDate = false;
    if (LogReader::parseTimestamp(line, 0, &hasDate)) {
        const qsizetype open = line.first(std::min<qsizetype>(line.size(), 48)).indexOf("[rank");
        if (open > 0) {
            qsizetype end = 0;
            const int r = number(open + 5, &end);
            if (r >= 0 && after(end, "]")) return r;
        }
    }
    return std::nullopt;
}

LogReader::Result LogReader::read(const QByteArray& bytes, const QString& sourcePath,
                                  int sourceIndex, std::optional<int> rank, bool splitByTag)
{
    Result result;
    auto shared = std::make_shared<const QByteArray>(bytes);
    std::vector<RankLog> streams;
    std::vector<RankLogBuilder> builders;
    std::map<int, std::size_t> byRank; // -1: untagged
    const auto streamOf = [&](std::optional<int> r) -> std::size_t {
        const int key = r.value_or(-1);
        if (const auto it = byRank.find(key); it != byRank.end()) return it->second;
        RankLog log;
        log.rank = r;
        log.sourceIndex = sourceIndex;
        log.sourcePath = sourcePath;
        log.splitFromCombined = splitByTag && r.has_value();
        log.m_bytes = shared;
        streams.push_back(std::move(log));
        byRank[key] = streams.size() - 1;
        return streams.size() - 1;
    };
    const char* data = shared->constData();
    const qsizetype size = shared->size();
    qsizetype pos = 0;
    int number = 0;
    std::vector<std::pair<std::size_t, std::array<std::int64_t, 3>>>
        lines; // stream, start, end, no
    lines.reserve(std::size_t(size / 80 + 1));
    while (pos < size) {
        const void* nl = std::memchr(data + pos, '\n', std::size_t(size - pos));
        const qsizetype end = nl ? static_cast<const char*>(nl) - data : size;
        qsizetype contentEnd = end;
        if (contentEnd > pos && data[contentEnd - 1] == '\r') --contentEnd;
        ++number;
        std::optional<int> r = rank;
        qsizetype skip = 0;
        if (splitByTag) {
            const QByteArrayView head(data + pos, std::min<qsizetype>(contentEnd - pos, 256));
            r = rankTag(head, &skip);
        }
        lines.push_back({streamOf(r), {pos + skip, contentEnd, number}});
        pos = end + 1;
    }
    if (streams.empty()) streamOf(rank);
    builders.reserve(streams.size());
    for (RankLog& s : streams)
        builders.emplace_back(s);
    for (const auto& [stream, l] : lines) {
        const QByteArrayView content(data + l[0], l[1] - l[0]);
        builders[stream].addLine(l[0], l[1], int(l[2]), content, 0);
    }
    for (RankLogBuilder& b : builders)
        b.finish();

    int longLines = 0;
    for (const RankLog& s : streams)
        longLines += s.longLines;
    result.message = QStringLiteral("%1 lines").arg(number);
    if (splitByTag) {
        const auto tagged = std::count_if(streams.begin(), streams.end(),
                                          [](const RankLog& s) { return s.rank.has_value(); });
        result.message += QStringLiteral(", %1 rank streams").arg(tagged);
    }
    if (longLines)
        result.message += QStringLiteral("; %1 line(s) over %2 KB, only their first %2 KB parsed")
                              .arg(longLines)
                              .arg(kParseLimitBytes / 1024);
    result.streams = std::move(streams);
    return result;
}

LogReader::Result LogReader::readFile(const QString& absolutePath, const QString& sourcePath,
                                      int sourceIndex, std::optional<int> rank, bool splitByTag)
{
    QFile file(absolutePath);
    if (!file.open(QIODevice::ReadOnly)) {
        Result r;
        r.ok = false;
        r.message = QStringLiteral("cannot open: %1").arg(file.errorString());
        return r;
    }
    return read(file.readAll(), sourcePath, sourceIndex, rank, splitByTag);
}

} // namespace rankscope
