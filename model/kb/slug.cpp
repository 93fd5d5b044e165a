#include "model/kb/slug.h"

namespace rankscope {

QString slugify(QStringView text)
{
    QString out;
    out.reserve(text.size() + 8);
    bool pendingDash = false;
    auto put = [&](QChar c) {
        if (pendingDash && !out.isEmpty()) out += QLatin1Char('-');
        pendingDash = false;
        out += c;
    };
    for (const QChar c : text) {
        if (c == QLatin1Char('&')) {
            // " and " is itself separated by non-alphanumerics, so it becomes "-and-".
            pendingDash = true;
            for (const char a : {'a', 'n', 'd'})
                put(QLatin1Char(a));
            pendingDash = true;
        } else if (c.isLetterOrNumber()) {
            put(c.toLower());
        } else {
            pendingDash = true;
        }
    }
    return out;
}

} // namespace rankscope
