#include "views/taxonomy/taxonomyfilterproxy.h"

#include "views/taxonomy/taxonomymodel.h"

namespace rankscope {

TaxonomyFilterProxy::TaxonomyFilterProxy(QObject* parent) : QSortFilterProxyModel(parent)
{
    setRecursiveFilteringEnabled(true);
    setAutoAcceptChildRows(true);
    setSortRole(TaxonomyModel::SortRole);
}

void TaxonomyFilterProxy::setFilterText(const QString& text)
{
    const QStringList words = text.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (words == m_words) return;
    m_words = words;
    invalidateFilter();
}

bool TaxonomyFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (m_words.isEmpty()) return true;
    const QString text = sourceModel()
                             ->index(sourceRow, 0, sourceParent)
                             .data(TaxonomyModel::SearchTextRole)
                             .toString();
    for (const QString& w : m_words)
        if (!text.contains(w, Qt::CaseInsensitive)) return false;
    return true;
}

} // namespace rankscope
