#pragma once

#include <QSortFilterProxyModel>

namespace rankscope {

// Keeps the nodes whose name, id, description or typical messages contain every word of the
// filter text (case-insensitive), with their ancestors; a matching category keeps its children.
class TaxonomyFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TaxonomyFilterProxy(QObject* parent = nullptr);
    void setFilterText(const QString& text);
    QString filterText() const { return m_words.join(QLatin1Char(' ')); }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QStringList m_words;
};

} // namespace rankscope
