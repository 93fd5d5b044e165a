#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QLineEdit;
class QSplitter;
class QTextBrowser;
class QTreeView;
class QUrl;

namespace rankscope {

class TaxonomyFilterProxy;
class TaxonomyModel;
struct TaxonomyNode;

// The study's taxonomy to browse: a filterable tree (stage > category > symptom) beside a detail
// page for the selected node: our description, typical messages, the fix patterns that resolved
// its issues (ranked, with counts and share, as a bar chart), frameworks, example issues (open in
// the web browser) and related how-to topics.
class TaxonomyBrowser : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxChartBars = 20;

    explicit TaxonomyBrowser(QWidget* parent = nullptr);

    bool selectNode(const QString& id);
    QString currentNodeId() const { return m_currentId; }
    void setFilterText(const QString& text);

    QLineEdit* filterEdit() const { return m_filter; }
    QTreeView* tree() const { return m_tree; }
    TaxonomyModel* model() const { return m_model; }
    TaxonomyFilterProxy* proxy() const { return m_proxy; }
    QTextBrowser* detail() const { return m_detail; }
    QChart* chart() const { return m_chart; }
    int chartBarCount() const { return m_barCount; }

    QByteArray saveState() const;
    // Selects the saved node at once; splitter sizes wait for the first show if the widget is
    // hidden, so they meet the real geometry instead of being stretched from a default one.
    void restoreState(const QByteArray& state);

    // How-to topics whose names share words with the node's names and description, best first.
    static QStringList relatedHowToIds(const TaxonomyNode& node, int limit = 5);

Q_SIGNALS:
    void nodeSelected(const QString& id);
    void walkthroughRequested(const QString& patternId);

protected:
    void showEvent(QShowEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void showNode(const TaxonomyNode* node);
    void fillChart(const TaxonomyNode* node);
    void styleChart();
    void onLink(const QUrl& url);

    TaxonomyModel* m_model = nullptr;
    TaxonomyFilterProxy* m_proxy = nullptr;
    QLineEdit* m_filter = nullptr;
    QTreeView* m_tree = nullptr;
    QTextBrowser* m_detail = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_chartView = nullptr;
    QSplitter* m_split = nullptr;
    QByteArray m_pendingState;
    QSplitter* m_detailSplit = nullptr;
    QString m_currentId;
    int m_barCount = 0;
};

} // namespace rankscope
