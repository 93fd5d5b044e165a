#pragma once

#include "model/tracesession.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QHash>
#include <QList>
#include <vector>

namespace rankscope {

struct TimelineMarker;

// The session's findings as a table, errors first, then warnings, then info (the analysis'
// order inside one severity is kept).
class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        SeverityColumn,
        KindColumn,
        RanksColumn,
        SymptomColumn,
        SummaryColumn,
        ColumnCount
    };
    enum Role { SeverityRole = Qt::UserRole + 1, FindingIdRole };

    explicit FindingsModel(QObject* parent = nullptr);

    void setSession(SessionPtr session);
    SessionPtr session() const { return m_session; }
    // nullptr for an invalid row.
    const Finding* finding(int row) const;
    int rowOfFinding(const QString& id) const; // -1 when absent

    // "rank 1", "ranks 0, 2"; "" when the finding blames no rank.
    static QString ranksText(const std::vector<int>& ranks);
    // The taxonomy node's name, or the id when the taxonomy does not know it.
    static QString symptomName(const std::string& id);
    // A finding's symptom as symptomName() names it; for a finding without one (a fact about
    // what the folder holds: missing ranks, unpaired collectives) what the CLI says instead.
    static QString findingSymptom(const Finding& f);
    // Fixed colours so a severity reads the same on a dark and a light palette.
    static QColor severityColor(Severity severity);

    // Every finding with a time range, as a timeline marker in its severity colour.
    static QList<TimelineMarker> timelineMarkers(const AnalysisResult& analysis);
    // The analysis' offsets (rank - offset = reference) as the timeline's (raw + offset =
    // common); ranks without an estimate are left out, so they stay on their own clock.
    static QHash<int, qint64> timelineOffsets(const ClockAlignment& clock);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    SessionPtr m_session;
    std::vector<int> m_rows; // index into session->analysis.findings
};

} // namespace rankscope
