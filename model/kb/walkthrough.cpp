#include "model/kb/walkthrough.h"

#include "model/kb/termmodel.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <algorithm>

namespace rankscope {

namespace {

QString text(const QJsonObject& o, const char* key)
{
    return o.value(QLatin1String(key)).toString();
}

} // namespace

WalkthroughBook WalkthroughBook::parse(const QByteArray& json, QString* error)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
    if (!doc.isObject()) {
        if (error)
            *error = QStringLiteral("walkthroughs: %1 at offset %2")
                         .arg(parseError.errorString())
                         .arg(parseError.offset);
        return {};
    }
    WalkthroughBook book;
    const QJsonObject root = doc.object();
    for (const QJsonValue& v : root.value(QLatin1String("facts")).toArray()) {
        const QJsonObject o = v.toObject();
        book.facts.push_back({text(o, "id"), text(o, "description")});
    }
    for (const QJsonValue& v : root.value(QLatin1String("auto_checks")).toArray()) {
        const QJsonObject o = v.toObject();
        AutoCheck check{text(o, "id"), text(o, "description"), {}};
        for (const QJsonValue& need : o.value(QLatin1String("needs")).toArray())
            check.needs << need.toString();
        book.autoChecks.push_back(check);
    }
    for (const QJsonValue& v : root.value(QLatin1String("walkthroughs")).toArray()) {
        const QJsonObject o = v.toObject();
        Walkthrough w{text(o, "pattern"), text(o, "title"), text(o, "summary"), {}};
        for (const QJsonValue& sv : o.value(QLatin1String("steps")).toArray()) {
            const QJsonObject s = sv.toObject();
            WalkthroughStep step;
            step.title = text(s, "title");
            step.why = text(s, "why");
            step.how = text(s, "how");
            const QJsonObject by = s.value(QLatin1String("by_framework")).toObject();
            // JSON objects are unordered; show the frameworks in one fixed order, then any
            // other key so validation can report it.
            static const QStringList order{QStringLiteral("pytorch"), QStringLiteral("horovod"),
                                           QStringLiteral("tensorflow")};
            for (const QString& f : order)
                if (by.contains(f)) step.byFramework.push_back({f, by.value(f).toString()});
            for (auto it = by.begin(); it != by.end(); ++it)
                if (!order.contains(it.key()))
                    step.byFramework.push_back({it.key(), it.value().toString()});
            step.good = text(s, "good");
            step.bad = text(s, "bad");
            step.autoCheck = text(s, "auto_check");
            w.steps.push_back(step);
        }
        book.walkthroughs.push_back(w);
    }
    return book;
}

int stepForEvidence(const Walkthrough& w, const QStringList& failedChecks, const QString& reason,
                    const std::vector<Walkthrough>& book)
{
    for (std::size_t i = 0; i < w.steps.size(); ++i)
        if (!w.steps[i].autoCheck.isEmpty() && failedChecks.contains(w.steps[i].autoCheck))
            return int(i);
    const QSet<QString> said = TermModel::words(reason.toUtf8());
    if (said.isEmpty()) return -1;
    const auto titleWords = [](const WalkthroughStep& step) {
        return TermModel::words(step.title.toUtf8());
    };
    int titles = 0;
    QHash<QString, int> titlesWith;
    for (const Walkthrough& other : book)
        for (const WalkthroughStep& step : other.steps) {
            ++titles;
            for (const QString& word : titleWords(step))
                ++titlesWith[word];
        }
    std::vector<QSet<QString>> ownTitles;
    for (const WalkthroughStep& step : w.steps)
        ownTitles.push_back(titleWords(step));
    const auto tells = [&](const QString& word) {
        return titlesWith.value(word) * 10 <= titles &&
               std::any_of(ownTitles.begin(), ownTitles.end(),
                           [&](const QSet<QString>& t) { return !t.contains(word); });
    };
    int best = -1, bestShared = 0, runnerUpShared = 0;
    for (std::size_t i = 0; i < ownTitles.size(); ++i) {
        const int shared =
            int(std::count_if(ownTitles[i].cbegin(), ownTitles[i].cend(), [&](const QString& word) {
                return said.contains(word) && tells(word);
            }));
        if (shared > bestShared) {
            runnerUpShared = bestShared;
            bestShared = shared;
            best = int(i);
        } else {
            runnerUpShared = std::max(runnerUpShared, shared);
        }
    }
    constexpr int kMinSharedWords = 2;
    return bestShared >= kMinSharedWords && bestShared > runnerUpShared ? best : -1;
}

} // namespace rankscope
