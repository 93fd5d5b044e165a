#include "model/trace/ranklog.h"

#include <algorithm>

namespace rankscope {

QString logFactKindName(LogFactKind kind)
{
    switch (kind) {
    case LogFactKind::NcclInit:
        return QStringLiteral("nccl_init");
    case LogFactKind::NcclNetInterface:
        return QStringLiteral("nccl_net");
    case LogFactKind::NcclVersion:
        return QStringLiteral("nccl_version");
    case LogFactKind::NcclWarn:
        return QStringLiteral("nccl_warn");
    case LogFactKind::NcclColl:
        return QStringLiteral("nccl_coll");
    case LogFactKind::Watchdog:
        return QStringLiteral("watchdog");
    case LogFactKind::Fingerprint:
        return QStringLiteral("fingerprint");
    case LogFactKind::Environment:
        return QStringLiteral("environment");
    case LogFactKind::Version:
        return QStringLiteral("version");
    case LogFactKind::Signal:
        return QStringLiteral("signal");
    }
    return QStringLiteral("unknown");
}

std::string LogFact::value(std::string_view key) const
{
    for (const auto& [k, v] : fields)
        if (k == key) return v;
    return {};
}

bool LogFact::has(std::string_view key) const
{
    return std::any_of(fields.begin(), fields.end(),
                       [&](const auto& kv) { return kv.first == key; });
}

QByteArrayView RankLog::lineBytes(int i) const
{
    const auto k = std::size_t(i);
    return QByteArrayView(m_bytes->constData() + m_start[k], m_end[k] - m_start[k]);
}

QString RankLog::lineText(int i) const
{
    return QString::fromUtf8(lineBytes(i));
}

int RankLog::indexOfLineNumber(int number) const
{
    const auto it = std::lower_bound(m_number.begin(), m_number.end(), number);
    if (it == m_number.end() || *it != number) return -1;
    return int(it - m_number.begin());
}

std::vector<const LogFact*> RankLog::factsOfKind(LogFactKind kind) const
{
    std::vector<const LogFact*> out;
    for (const LogFact& f : m_facts)
        if (f.kind == kind) out.push_back(&f);
    return out;
}

std::optional<int> RankLog::lastStep() const
{
    if (m_steps.empty()) return std::nullopt;
    return m_steps.back().step;
}

} // namespace rankscope
