#include "model/trace/elasticerrorreader.h"

#include <QRegularExpression>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace rankscope {

namespace {

// Seconds since the epoch of a ChildFailedError entry's `time` ("2026-12-02_13:41:44", printed
// in the launcher's local time, as the ranks' log timestamps are and read the same way), or -1.
std::int64_t launcherEntrySeconds(const std::string& time)
{
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    char sep = 0;
    if (std::sscanf(time.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &sep, &h, &mi, &s) !=
            7 ||
        (sep != '_' && sep != ' ' && sep != 'T'))
        return -1;
    const std::chrono::year_month_day day{std::chrono::year{y}, std::chrono::month(unsigned(mo)),
                                          std::chrono::day(unsigned(d))};
    if (!day.ok() || h > 23 || mi > 59 || s > 60) return -1;
    return std::chrono::sys_days{day}.time_since_epoch() / std::chrono::seconds(1) + h * 3600 +
           mi * 60 + s;
}

void splitException(const std::string& text, ElasticError& e)
{
    static const QRegularExpression exc(QStringLiteral("^([A-Za-z_][\\w.]*): (.*)$"),
                                        QRegularExpression::DotMatchesEverythingOption);
    const QRegularExpressionMatch m = exc.match(QString::fromStdString(text));
    if (m.hasMatch()) {
        e.exceptionType = m.captured(1).toStdString();
        e.message = m.captured(2).toStdString();
    } else {
        e.message = text;
    }
}

} // namespace

std::optional<ElasticError> ElasticErrorReader::readErrorFile(const QByteArray& bytes,
                                                              QString* error)
{
    using json = nlohmann::json;
    const json doc =
        json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        if (error) *error = QStringLiteral("not valid JSON (truncated or corrupt error file)");
        return std::nullopt;
    }
    const auto message = doc.find("message");
    if (message == doc.end()) {
        if (error) *error = QStringLiteral("no \"message\" field: not a torchelastic error file");
        return std::nullopt;
    }
    ElasticError e;
    if (message->is_string()) { // legacy form: the message is the text itself
        splitException(message->get<std::string>(), e);
    } else if (message->is_object()) {
        if (const auto m = message->find("message"); m != message->end() && m->is_string())
            splitException(m->get<std::string>(), e);
        if (const auto x = message->find("extraInfo"); x != message->end() && x->is_object()) {
            if (const auto cs = x->find("py_callstack"); cs != x->end() && cs->is_string())
                e.traceback = cs->get<std::string>();
            if (const auto ts = x->find("timestamp"); ts != x->end()) {
                if (ts->is_number()) e.timestampS = ts->get<std::int64_t>();
                if (ts->is_string()) {
                    bool ok = false;
                    const qint64 v = QString::fromStdString(ts->get<std::string>()).toLongLong(&ok);
                    if (ok) e.timestampS = v;
                }
            }
        }
    } else {
        if (error) *error = QStringLiteral("\"message\" is neither text nor an object");
        return std::nullopt;
    }
    if (e.message.empty() && e.exceptionType.empty()) {
        if (error) *error = QStringLiteral("error file has an empty message");
        return std::nullopt;
    }
    return e;
}

std::vector<ElasticError> ElasticErrorReader::readLauncherLog(const RankLog& launcher)
{
    std::vector<ElasticError> out;
    static const QRegularExpression entryHead(QStringLiteral("^\\[(\\d+)\\]:\\s*$"));
    static const QRegularExpression field(
        QStringLiteral("^\\s{2}(time|host|rank|exitcode|error_file|traceback)\\s*:\\s?(.*)$"));
    static const QRegularExpression rankField(
        QStringLiteral("^(\\d+)(?: \\(local_rank: (\\d+)\\))?"));
    static const QRegularExpression exitField(QStringLiteral("^(-?\\d+)(?: \\(pid: (\\d+)\\))?"));
    static const QRegularExpression signal(
        QStringLiteral("Signal (\\d+) \\((SIG\\w+)\\) received by PID (\\d+)"));
    static const QRegularExpression excLine(
        QStringLiteral("^\\s*([A-Za-z_][\\w.]*(?:Error|Exception|Exit|Interrupt|Timeout)): (.*)$"));

    ElasticError::Origin section = ElasticError::Origin::LauncherFailure;
    bool inBox = false;
    std::optional<ElasticError> current;
    bool inTraceback = false;
    const auto flush = [&] {
        if (current) out.push_back(std::move(*current));
        current.reset();
        inTraceback = false;
    };
    for (int i = 0; i < launcher.lineCount(); ++i) {
        if (launcher.lineBytes(i).size() > 4096) continue;
        const QString line = launcher.lineText(i);
        if (line.contains(QLatin1String("ChildFailedError"))) inBox = true;
        if (!inBox) continue;
        if (line.startsWith(QLatin1String("Failures:"))) {
            flush();
            section = ElasticError::Origin::LauncherFailure;
            continue;
        }
        if (line.startsWith(QLatin1String("Root Cause"))) {
            flush();
            section = ElasticError::Origin::LauncherRootCause;
            continue;
        }
        if (line.startsWith(QLatin1String("=====")) || line.startsWith(QLatin1String("-----"))) {
            flush();
            if (line.startsWith(QLatin1String("=====")) &&
                section == ElasticError::Origin::LauncherRootCause)
                inBox = false; // the closing rule of the box
            continue;
        }
        if (entryHead.match(line).hasMatch()) {
            flush();
            current = ElasticError{};
            current->origin = section;
            current->sourceIndex = launcher.sourceIndex;
            current->line = current->lastLine = i;
            continue;
        }
        if (!current) continue;
        current->lastLine = i;
        const QRegularExpressionMatch f = field.match(line);
        if (f.hasMatch()) {
            inTraceback = false;
            const QString key = f.captured(1);
            const QString value = f.captured(2).trimmed();
            if (key == QLatin1String("time")) {
                current->time = value.toStdString();
                current->timestampS = launcherEntrySeconds(current->time);
            } else if (key == QLatin1String("host"))
                current->host = value.toStdString();
            else if (key == QLatin1String("error_file")) {
                if (value != QLatin1String("<N/A>")) current->errorFile = value.toStdString();
            } else if (key == QLatin1String("rank")) {
                const auto m = rankField.match(value);
                if (m.hasMatch()) {
                    current->rank = m.captured(1).toInt();
                    if (m.hasCaptured(2)) current->localRank = m.captured(2).toInt();
                }
            } else if (key == QLatin1String("exitcode")) {
                const auto m = exitField.match(value);
                if (m.hasMatch()) {
                    current->exitCode = m.captured(1).toInt();
                    if (m.hasCaptured(2)) current->pid = m.captured(2).toInt();
                }
            } else if (key == QLatin1String("traceback")) {
                inTraceback = true;
                current->traceback = value.toStdString();
                if (const auto s = signal.match(value); s.hasMatch()) {
                    current->signal = s.captured(2).toStdString();
                    current->pid = s.captured(3).toInt();
                }
            }
            continue;
        }
        if (inTraceback) {
            current->traceback += '\n';
            current->traceback += line.toStdString();
            if (const auto m = excLine.match(line); m.hasMatch()) {
                current->exceptionType = m.captured(1).toStdString();
                current->message = m.captured(2).toStdString();
            }
        }
    }
    flush();
    return out;
}

} // namespace rankscope
