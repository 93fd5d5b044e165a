#include "model/kb/signature.h"

namespace rankscope {

bool Signature::readsEarly(const QMap<QString, QString>& hitFields) const
{
    if (earlyField.isEmpty()) return false;
    bool ok = false;
    const qint64 value = hitFields.value(earlyField).toLongLong(&ok);
    return ok && value <= earlyAtMost;
}

QString signatureRoleName(SignatureRole role)
{
    switch (role) {
    case SignatureRole::Root:
        return QStringLiteral("root");
    case SignatureRole::Cascade:
        return QStringLiteral("cascade");
    case SignatureRole::Cue:
        return QStringLiteral("cue");
    }
    return {};
}

} // namespace rankscope
