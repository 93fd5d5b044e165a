#include "model/kb/signature.h"

namespace rankscope {

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
