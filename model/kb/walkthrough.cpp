#include "model/kb/walkthrough.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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

} // namespace rankscope
