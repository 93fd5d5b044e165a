#pragma once

#include "model/investigation/investigation.h"

#include <QList>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

namespace rankscope {

// Shown while no folder is open: what RankScope does, an Open Folder button and the recent
// investigations to pick up again.
class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(QWidget* parent = nullptr);

    void setInvestigations(const QList<InvestigationSummary>& investigations);
    // Shown above the list, e.g. that the database had to be set aside.
    void setNotice(const QString& text);
    QListWidget* list() const { return m_list; }
    QPushButton* openButton() const { return m_open; }

Q_SIGNALS:
    void openFolderRequested();
    void reopenRequested(const QString& folder);

private:
    QListWidget* m_list = nullptr;
    QPushButton* m_open = nullptr;
    QLabel* m_empty = nullptr;
    QLabel* m_notice = nullptr;
};

} // namespace rankscope
