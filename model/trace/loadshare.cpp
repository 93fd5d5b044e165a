#include "model/trace/loadshare.h"

#include <algorithm>
#include <utility>

namespace rankscope {

LoadShare::LoadShare(std::vector<std::int64_t> perLoad, std::vector<std::int64_t> perFile,
                     std::size_t sources)
    : m_perLoad(perLoad), m_perFile(std::move(perFile)), m_left(std::move(perLoad)),
      m_pending(sources), m_caps(capsFor(sources))
{}

std::vector<std::int64_t> LoadShare::capsFor(std::size_t sources) const
{
    std::vector<std::int64_t> caps(m_perFile.size());
    for (std::size_t u = 0; u < caps.size(); ++u)
        caps[u] = std::min(m_perFile[u], std::max<std::int64_t>(m_left[u], 0) /
                                             std::int64_t(std::max<std::size_t>(sources, 1)));
    return caps;
}

void LoadShare::ended(const std::vector<std::int64_t>& used)
{
    for (std::size_t u = 0; u < m_left.size(); ++u)
        m_left[u] -= used[u];
    --m_pending;
}

bool LoadShare::grow()
{
    if (m_pending == 0) return false;
    // The sources that ended used at most their caps, so the shares never shrink; unchanged
    // shares would stop the same sources at the same place again.
    std::vector<std::int64_t> caps = capsFor(m_pending);
    if (caps == m_caps) return false;
    m_caps = std::move(caps);
    return true;
}

} // namespace rankscope
