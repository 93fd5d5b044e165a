#pragma once

#include <QString>

namespace rankscope {

// "1 rank" or "4 ranks", from tr("%1 rank") and tr("%1 ranks"): no translation is loaded, so
// tr()'s %n would read "1 rank(s)", and a bare "%1 ranks" reads "1 ranks".
inline QString countText(qsizetype n, const QString& one, const QString& many)
{
    return (n == 1 ? one : many).arg(n);
}

} // namespace rankscope
