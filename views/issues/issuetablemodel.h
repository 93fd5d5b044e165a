#pragma once

#include "model/kb/issuecorpus.h"

#include <QAbstractTableModel>
#include <QHash>
#include <array>

namespace rankscope {

// The issues of a corpus that match a filter, as a table. The matching ids are read at once (one
// integer per issue); the rows themselves are read in batches as the view scrolls (fetchMore), so
// a corpus of any size opens at the speed of its first screen.
//
// sort() orders every match, not only the fetched rows: a proxy model would sort just the first
// batches. The first sort by a column reads the table fields of the whole corpus once (no text,
// no snippets) and ranks every issue by that column; every later sort and filter change reorders
// the matching ids by those ranks without reading a record. The order is kept across filter
// changes and ties keep the default order.
class IssueTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IssueColumn,
        FrameworkColumn,
        SourceColumn,
        StageColumn,
        LeafColumn,
        FixPatternColumn,
        DistributedColumn,
        MatchColumn,
        ColumnCount
    };
    enum Role {
        IdRole = Qt::UserRole, // qint64
        LinkRole,
        // The match excerpt as HTML with the matched words in <b>; empty without a search.
        SnippetHtmlRole,
    };
    static constexpr int kBatchRows = 200;

    explicit IssueTableModel(QObject* parent = nullptr);

    // Not owned; must outlive the model (or be replaced with nullptr first).
    void setCorpus(const IssueCorpus* corpus);
    void setFilter(const IssueFilter& filter);
    const IssueFilter& filter() const { return m_filter; }
    // Re-reads the matches and ranks the corpus again (after an import: new or replaced records).
    void refresh();
    // -1: the default order, by the Issue column ("horovod #20" before "horovod #100"), or best
    // match first while searching.
    int sortColumn() const { return m_sortColumn; }
    Qt::SortOrder sortOrder() const { return m_sortOrder; }
    // Orders text with its digit runs compared as numbers ("#20" before "#100"), case-insensitive.
    static int naturalCompare(QStringView a, QStringView b);

    // Issues that match, fetched or not.
    int matchCount() const { return int(m_ids.size()); }
    // No issue has every word of the search: the matches have some of them
    // (IssueCorpus::matchingIds).
    bool matchesAnyWord() const { return m_anyWord; }
    qint64 idAt(int row) const;
    const IssueRecord* recordAt(int row) const;
    // Row of an id among the fetched rows, fetching further batches as needed; -1 if no match.
    int rowOfId(qint64 id);

    // "hang" for a leaf id; a name shared by leaves of several stages gets its stage appended.
    static QString leafLabel(const QString& leafId);
    static QString stageLabel(const QString& stageId);
    static QString fixPatternLabel(const QString& patternId);
    // The snippet's markers as <b>…</b> around HTML-escaped text.
    static QString snippetHtml(const QString& snippet);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;
    // The Match column sorts by relevance (best first when ascending), the others by their text.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

Q_SIGNALS:
    void matchCountChanged(int count);

private:
    QString text(const IssueRecord& r, int column) const;
    void readMatches();
    void sortIds();
    // Every corpus issue's place in the natural order of `column`'s text (equal texts share one).
    const QHash<qint64, int>& ranks(int column);

    const IssueCorpus* m_corpus = nullptr;
    IssueFilter m_filter;
    QList<qint64> m_ids;
    bool m_anyWord = false;
    QList<IssueRecord> m_rows;
    // Per column, empty until a sort needs it; dropped when the corpus changes.
    std::array<QHash<qint64, int>, ColumnCount> m_ranks;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
    // Views and testers call fetchMore() from their handlers of our own reset and insert
    // signals; inserting then would nest one change inside another.
    bool m_changing = false;
};

} // namespace rankscope
