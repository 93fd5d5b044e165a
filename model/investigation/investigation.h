#pragma once

#include <QDateTime>
#include <QString>

namespace rankscope {

// Where the user is with one checklist step.
enum class StepStatus { ToDo, Done, Skipped, Failed };

QString stepStatusKey(StepStatus status);         // "todo", "done", ... (stored form)
StepStatus stepStatusFromKey(const QString& key); // unknown keys read as ToDo
QString stepStatusLabel(StepStatus status);       // "To do", "Done", ... (for people)

struct StepState {
    StepStatus status = StepStatus::ToDo;
    QString note;
    QDateTime updatedAt;
};

// One opened folder as the start page lists it.
struct InvestigationSummary {
    qint64 id = -1;
    QString folder; // canonical path
    QDateTime openedAt;
    QDateTime updatedAt;
    int stepsDone = 0;    // checklist steps marked done, over every pattern
    int stepsTouched = 0; // steps with any status but "to do" or a note
};

struct TimelineBookmark {
    qint64 id = -1;
    qint64 t0Ns = 0;
    qint64 t1Ns = 0;
    QString label;
};

} // namespace rankscope

namespace rankscope {

// What the analysis concluded for an auto-check on the loaded folder.
enum class AutoCheckOutcome { Passed, Failed, Unknown };

} // namespace rankscope
