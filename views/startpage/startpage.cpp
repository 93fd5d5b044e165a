#include "views/startpage/startpage.h"

#include "views/counttext.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

namespace rankscope {

StartPage::StartPage(QWidget* parent) : QWidget(parent)
{
    auto* title = new QLabel(tr("<h1>RankScope</h1>"), this);
    auto* intro = new QLabel(tr("Open the folder of a distributed training job's per-rank traces "
                                "and logs to see which rank stalled, what the errors mean and "
                                "which fixes worked for others. Drop a folder here or:"),
                             this);
    intro->setWordWrap(true);
    m_open = new QPushButton(QIcon::fromTheme(QStringLiteral("document-open")), tr("Open Folder…"),
                             this);
    m_open->setObjectName(QStringLiteral("startOpenFolder"));
    connect(m_open, &QPushButton::clicked, this, &StartPage::openFolderRequested);

    m_notice = new QLabel(this);
    m_notice->setObjectName(QStringLiteral("startNotice"));
    m_notice->setWordWrap(true);
    m_notice->setFrameShape(QFrame::StyledPanel);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->hide();

    auto* recent = new QLabel(tr("<h3>Recent investigations</h3>"), this);
    m_empty = new QLabel(tr("None yet: every folder you open becomes an investigation that keeps "
                            "its checklists, notes and bookmarks."),
                         this);
    m_empty->setWordWrap(true);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("recentInvestigations"));
    m_list->setAlternatingRowColors(true);
    m_list->setWordWrap(true);
    m_list->setTextElideMode(Qt::ElideMiddle);
    connect(m_list, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        if (item->flags() & Qt::ItemIsEnabled)
            Q_EMIT reopenRequested(item->data(Qt::UserRole).toString());
    });

    auto* column = new QVBoxLayout;
    column->addWidget(title);
    column->addWidget(intro);
    column->addWidget(m_open, 0, Qt::AlignLeft);
    column->addWidget(m_notice);
    column->addWidget(recent);
    column->addWidget(m_empty);
    column->addWidget(m_list, 1);
    // Takes the height the list leaves when there is no list, so the text stays packed at the
    // top instead of being spread down the page.
    column->addStretch(0);

    // Keep the text at a readable measure on wide windows, in units of the font.
    auto* body = new QWidget(this);
    body->setLayout(column);
    body->setMaximumWidth(fontMetrics().averageCharWidth() * 110);
    auto* layout = new QHBoxLayout(this);
    layout->addStretch(1);
    layout->addWidget(body, 100);
    layout->addStretch(1);
    setInvestigations({});
}

void StartPage::setNotice(const QString& text)
{
    m_notice->setText(text);
    m_notice->setVisible(!text.isEmpty());
}

void StartPage::setInvestigations(const QList<InvestigationSummary>& investigations)
{
    m_list->clear();
    const QLocale locale;
    for (const InvestigationSummary& inv : investigations) {
        const QFileInfo info(inv.folder);
        const bool present = info.isDir();
        QString text =
            tr("%1\n%2\nlast worked on %3 · %4 done")
                .arg(info.fileName().isEmpty() ? inv.folder : info.fileName(),
                     QDir::toNativeSeparators(inv.folder),
                     locale.toString(inv.updatedAt, QLocale::ShortFormat),
                     countText(inv.stepsDone, tr("%1 checklist step"), tr("%1 checklist steps")));
        if (!present) text += tr(" · folder missing");
        auto* item = new QListWidgetItem(text, m_list);
        item->setData(Qt::UserRole, inv.folder);
        item->setToolTip(present
                             ? tr("Reopen %1").arg(QDir::toNativeSeparators(inv.folder))
                             : tr("%1 no longer exists").arg(QDir::toNativeSeparators(inv.folder)));
        if (!present) item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
    }
    m_empty->setVisible(investigations.isEmpty());
    m_list->setVisible(!investigations.isEmpty());
}

} // namespace rankscope
