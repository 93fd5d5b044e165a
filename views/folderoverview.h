#pragma once

#include "model/tracesession.h"

#include <QTextBrowser>

namespace rankscope {

// The first page a user sees after opening a folder: what was found, per rank, and what could
// not be read or attributed. Without a session it says how to open one.
class FolderOverview : public QTextBrowser {
    Q_OBJECT
public:
    explicit FolderOverview(QWidget* parent = nullptr);
    // `diagnosisNote`, when given, stands in place of the diagnosis section: the session is read
    // but not (yet) diagnosed ("Diagnosing…").
    void setSession(const SessionPtr& session, const QString& diagnosisNote = {});
    // The "Diagnosis" section at the top of the page: the error and warning findings.
    static QString diagnosisHtml(const TraceSession& session);

private:
    void showWelcome();
};

} // namespace rankscope
