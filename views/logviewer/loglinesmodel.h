#pragma once

#include "model/trace/ranklog.h"

#include <QAbstractListModel>
#include <QColor>
#include <QSet>

class QPalette;

namespace rankscope {

// One RankLog's lines as rows ("  123  text"); the line text is produced only for visible rows,
// so a log of millions of lines costs one pass over its line lengths up front. Cited lines are
// drawn on a tint of the palette's highlight colour.
class LogLinesModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role { LineNumberRole = Qt::UserRole + 1, CitedRole };

    explicit LogLinesModel(QObject* parent = nullptr);

    // The log must outlive the model or be replaced first (the session keeps it).
    void setLog(const RankLog* log, QSet<int> citedLineNumbers);
    // Other cited lines in the same log: no reset, so the view keeps its place.
    void setCited(QSet<int> citedLineNumbers);
    const RankLog* log() const { return m_log; }
    bool isCited(int lineNumber) const { return m_cited.contains(lineNumber); }
    // The row of the longest line in bytes among the first kWidestRowScanLines: a view of uniform
    // rows sizes them all by one row, and by this one no line is cut short. -1 when empty.
    int widestRow() const { return m_widestRow; }
    static constexpr int kWidestRowScanLines = 1'000'000;
    // What a cited line is drawn on (BackgroundRole), in the palette's Text colour.
    static QColor citedBackground(const QPalette& palette);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    const RankLog* m_log = nullptr;
    QSet<int> m_cited;
    int m_numberWidth = 1;
    int m_widestRow = -1;
};

} // namespace rankscope
