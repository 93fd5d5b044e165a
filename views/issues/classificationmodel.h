#pragma once

#include "model/kb/symptomclassifier.h"

#include <QAbstractItemModel>

namespace rankscope {

// The classifier's ranked symptoms for a pasted text: one top-level row per candidate (symptom,
// probability), its evidence lines as children (the line and the rule that matched it), then,
// when the learned term model scored it, one child listing the report's words that did.
class ClassificationModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { SymptomColumn, ScoreColumn, EvidenceColumn, ColumnCount };
    enum Role { SymptomIdRole = Qt::UserRole, ScoreRole };

    explicit ClassificationModel(QObject* parent = nullptr);

    void setCandidates(const QList<Candidate>& candidates);
    const QList<Candidate>& candidates() const { return m_candidates; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    // internalId: 0 for a candidate row, candidate row + 1 for its evidence and terms rows.
    QList<Candidate> m_candidates;
};

} // namespace rankscope
