#include "model/trace/loadshare.h"

#include <QtGlobal>
#include <algorithm>
#include <utility>

namespace rankscope {

LoadShare::LoadShare(LoadSharing sharing, std::vector<std::int64_t> perLoad,
                     std::vector<std::int64_t> perFile, std::size_t sources)
    : m_sharing(sharing), m_perLoad(std::move(perLoad)), m_perFile(std::move(perFile)),
      m_left(std::make_unique<std::atomic<std::int64_t>[]>(m_perLoad.size())), m_pending(sources)
{
    for (std::size_t u = 0; u < m_perLoad.size(); ++u)
        m_left[u] = m_perLoad[u];
    if (m_sharing == LoadSharing::Even) m_caps = capsFor(sources);
}

LoadShare LoadShare::even(std::vector<std::int64_t> perLoad, std::vector<std::int64_t> perFile,
                          std::size_t sources)
{
    return LoadShare(LoadSharing::Even, std::move(perLoad), std::move(perFile), sources);
}

LoadShare LoadShare::firstCome(std::vector<std::int64_t> perLoad)
{
    return LoadShare(LoadSharing::FirstCome, std::move(perLoad), {}, 0);
}

std::vector<std::int64_t> LoadShare::capsFor(std::size_t sources) const
{
    std::vector<std::int64_t> caps(m_perFile.size());
    for (std::size_t u = 0; u < caps.size(); ++u)
        caps[u] = std::min(m_perFile[u], std::max<std::int64_t>(m_left[u].load(), 0) /
                                             std::int64_t(std::max<std::size_t>(sources, 1)));
    return caps;
}

void LoadShare::ended(const std::vector<std::int64_t>& used)
{
    Q_ASSERT(m_sharing == LoadSharing::Even);
    for (std::size_t u = 0; u < m_perLoad.size(); ++u)
        m_left[u] -= used[u];
    --m_pending;
}

bool LoadShare::grow()
{
    Q_ASSERT(m_sharing == LoadSharing::Even);
    if (m_pending == 0) return false;
    // The sources that ended used at most their caps, so the shares never shrink; unchanged
    // shares would stop the same sources at the same place again.
    std::vector<std::int64_t> caps = capsFor(m_pending);
    if (caps == m_caps) return false;
    m_caps = std::move(caps);
    return true;
}

std::int64_t LoadShare::take(std::size_t unit, std::int64_t wanted)
{
    Q_ASSERT(m_sharing == LoadSharing::FirstCome);
    std::atomic<std::int64_t>& left = m_left[unit];
    std::int64_t before = left.load();
    std::int64_t taken = 0;
    do {
        taken = std::clamp<std::int64_t>(before, 0, wanted);
    } while (!left.compare_exchange_weak(before, before - taken));
    return taken;
}

} // namespace rankscope
