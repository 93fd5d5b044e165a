#pragma once

#include "model/investigation/investigation.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <vector>

namespace rankscope {

class InvestigationStore;
struct TraceSession;

// An investigation as one document: the analysis exactly as `rankscope analyze --format markdown`
// writes it (AnalysisReport), then the auto-checks with their evidence, every checklist the user
// worked on with its step states and notes, the investigation notes, the timeline bookmarks and
// a timeline snapshot. Markdown, or one self-contained HTML file (the snapshot inline as a data:
// URI, the style inline, nothing fetched).
class InvestigationReport {
public:
    struct Checklist {
        QString patternId;
        QHash<int, StepState> steps; // as stored; untouched steps are absent
    };

    explicit InvestigationReport(const TraceSession& session);

    // Reads the checklists (every walkthrough with a touched step, and the one the user was on),
    // the notes and the bookmarks of an investigation.
    void readInvestigation(const InvestigationStore& store, qint64 investigationId);

    void setChecklists(std::vector<Checklist> checklists) { m_checklists = std::move(checklists); }
    void setNotes(const QString& notes) { m_notes = notes; }
    void setBookmarks(const QList<TimelineBookmark>& bookmarks) { m_bookmarks = bookmarks; }
    // PNG bytes of the timeline as the user sees it; the GUI renders it, the report only embeds.
    void setTimelinePng(const QByteArray& png) { m_png = png; }
    void setGeneratedAt(const QDateTime& at) { m_generatedAt = at; }

    QString toMarkdown() const;
    QString toHtml() const;
    // HTML when the path ends in .html or .htm, else Markdown.
    bool writeFile(const QString& path, QString* error) const;

private:
    const TraceSession& m_session;
    std::vector<Checklist> m_checklists;
    QString m_notes;
    QList<TimelineBookmark> m_bookmarks;
    QByteArray m_png;
    QDateTime m_generatedAt;
};

} // namespace rankscope
