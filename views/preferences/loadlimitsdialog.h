#pragma once

#include "model/trace/traceread.h"

#include <QDialog>

class QDoubleSpinBox;
class QSpinBox;

namespace rankscope {

// File > Load Limits…: the budgets a folder's files are read up to, the same ReadOptions budgets
// that `rankscope analyze --max-trace-events / --max-decompressed / --max-inflation /
// --max-log-bytes / --max-log-lines / --max-rank-tags / --max-dump-entries / --max-dump-bytes`
// set (per file and, where a budget has one, per load), kept in QSettings for the next sessions.
// A file over one keeps what was read and is marked truncated, naming the limit
// (SourceFile::limit).
class LoadLimitsDialog : public QDialog {
    Q_OBJECT
public:
    // Edits the budgets of `current` (its other members are kept as they are).
    explicit LoadLimitsDialog(const ReadOptions& current, QWidget* parent = nullptr);

    // `current` with the budgets as edited.
    ReadOptions limits() const;

    // The budgets saved in QSettings over ReadOptions' defaults; save() keeps them.
    static ReadOptions saved();
    static void save(const ReadOptions& options);

private:
    void setFields(const ReadOptions& options);

    ReadOptions m_current;
    QDoubleSpinBox* m_traceEvents;      // millions
    QDoubleSpinBox* m_traceEventsLoad;  // millions
    QDoubleSpinBox* m_decompressed;     // GiB
    QDoubleSpinBox* m_decompressedLoad; // GiB
    QSpinBox* m_inflation;              // times; 0: no limit
    QDoubleSpinBox* m_logBytes;         // GiB
    QDoubleSpinBox* m_logBytesLoad;     // GiB
    QDoubleSpinBox* m_logLinesFile;     // millions
    QDoubleSpinBox* m_logLinesLoad;     // millions
    QSpinBox* m_rankTagsFile;
    QSpinBox* m_rankTagsLoad;
    QSpinBox* m_dumpEntries;
    QSpinBox* m_dumpEntriesLoad;
    QDoubleSpinBox* m_dumpBytes; // GiB
};

} // namespace rankscope
