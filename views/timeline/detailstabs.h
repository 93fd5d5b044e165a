#pragma once

#include <QTabWidget>
#include <optional>

class QTextDocument;
class QToolButton;

namespace rankscope {

class SummaryLine;

// The tabs under the timeline's lanes: the selection's details and the charts. Folded, only the
// tab row shows, with the details' text on one line beside the tabs, so that the lanes get the
// height while there is nothing to read. It unfolds when something is selected, when a tab is
// clicked or raised, and by its button (Ctrl+Shift+D); it folds again when the selection is
// cleared on the details' tab. A fold or unfold the user chose holds until the selection comes or
// goes. The panel around it gives it collapsedHeight() folded, and its own choice of height
// unfolded.
class DetailsTabs : public QTabWidget {
    Q_OBJECT
public:
    explicit DetailsTabs(QWidget* parent = nullptr);

    // A page, which folding squeezes to nothing (its own minimum height would hold the pane open).
    void addPage(QWidget* page, const QString& label);
    // Unless the user chose: unfolded while something is selected or a chart is raised.
    bool isExpanded() const
    {
        return m_userExpanded.value_or(m_hasSelection || currentIndex() > 0);
    }
    // Whether the timeline has a selection: the pane follows it unless the user chose otherwise.
    void setHasSelection(bool hasSelection);
    // The user's choice (the button, a tab, the splitter's handle).
    void setUserExpanded(bool expanded);
    // The pane's height folded: its tab row.
    int collapsedHeight() const;
    // The text beside the tabs: what the details page says (`doc`) on one line, shown while that
    // page is hidden (folded, or a chart raised).
    void setSummaryFrom(const QTextDocument& doc);
    QString summary() const;
    // Whether the summary is drawn (it is hidden while the details page shows the same text).
    bool isSummaryShown() const;
    QToolButton* toggleButton() const { return m_toggle; }

Q_SIGNALS:
    void expandedChanged(bool expanded);

private:
    // The button, the summary and expandedChanged after a change of state.
    void refresh(bool wasExpanded);

    bool m_hasSelection = false;
    std::optional<bool> m_userExpanded;
    SummaryLine* m_summary = nullptr;
    QToolButton* m_toggle = nullptr;
};

} // namespace rankscope
