#include "views/preferences/loadlimitsdialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

namespace rankscope {

namespace {

constexpr double kMillion = 1e6;
constexpr double kGiB = double(std::int64_t(1) << 30);

const QString kTraceEvents = QStringLiteral("loadLimits/traceEvents");
const QString kTraceEventsLoad = QStringLiteral("loadLimits/traceEventsPerLoad");
const QString kDecompressed = QStringLiteral("loadLimits/decompressedBytes");
const QString kDecompressedLoad = QStringLiteral("loadLimits/decompressedBytesPerLoad");
const QString kInflation = QStringLiteral("loadLimits/inflationRatio");
const QString kLogBytes = QStringLiteral("loadLimits/logBytes");
const QString kLogBytesLoad = QStringLiteral("loadLimits/logBytesPerLoad");
const QString kLogLinesFile = QStringLiteral("loadLimits/logLinesPerFile");
const QString kLogLinesLoad = QStringLiteral("loadLimits/logLinesPerLoad");
const QString kRankTagsFile = QStringLiteral("loadLimits/rankTagsPerFile");
const QString kRankTagsLoad = QStringLiteral("loadLimits/rankTagsPerLoad");
const QString kDumpEntries = QStringLiteral("loadLimits/dumpEntries");
const QString kDumpEntriesLoad = QStringLiteral("loadLimits/dumpEntriesPerLoad");
const QString kDumpBytes = QStringLiteral("loadLimits/dumpDecodedBytes");

// A field of `unit`s: three decimals (a thousand events, about a MB), up to `max` units.
QDoubleSpinBox* unitField(const QString& name, const QString& suffix, double max)
{
    auto* field = new QDoubleSpinBox;
    field->setObjectName(name);
    field->setDecimals(3);
    field->setRange(0.001, max);
    field->setSuffix(suffix);
    return field;
}

// A field of whole counts, 1 to `max`.
QSpinBox* countField(const QString& name, const QString& suffix, int max)
{
    auto* field = new QSpinBox;
    field->setObjectName(name);
    field->setRange(1, max);
    field->setSuffix(suffix);
    return field;
}

std::int64_t units(const QDoubleSpinBox* field, double unit)
{
    return std::int64_t(std::llround(field->value() * unit));
}

// A saved value: positive, else `fallback`.
std::int64_t savedValue(const QSettings& settings, const QString& key, std::int64_t fallback)
{
    bool ok = false;
    const qint64 v = settings.value(key).toLongLong(&ok);
    return ok && v > 0 ? v : fallback;
}

} // namespace

LoadLimitsDialog::LoadLimitsDialog(const ReadOptions& current, QWidget* parent)
    : QDialog(parent), m_current(current),
      m_traceEvents(unitField(QStringLiteral("traceEvents"), tr(" M events"), 1e6)),
      m_traceEventsLoad(unitField(QStringLiteral("traceEventsLoad"), tr(" M events"), 1e6)),
      m_decompressed(unitField(QStringLiteral("decompressed"), tr(" GiB"), 1 << 20)),
      m_decompressedLoad(unitField(QStringLiteral("decompressedLoad"), tr(" GiB"), 1 << 20)),
      m_inflation(new QSpinBox),
      m_logBytes(unitField(QStringLiteral("logBytes"), tr(" GiB"), 1 << 20)),
      m_logBytesLoad(unitField(QStringLiteral("logBytesLoad"), tr(" GiB"), 1 << 20)),
      m_logLinesFile(unitField(QStringLiteral("logLinesFile"), tr(" M lines"), 1e6)),
      m_logLinesLoad(unitField(QStringLiteral("logLinesLoad"), tr(" M lines"), 1e6)),
      m_rankTagsFile(countField(QStringLiteral("rankTagsFile"), tr(" tags"), 1 << 24)),
      m_rankTagsLoad(countField(QStringLiteral("rankTagsLoad"), tr(" tags"), 1 << 24)),
      m_dumpEntries(countField(QStringLiteral("dumpEntries"), tr(" entries"), 2'000'000'000)),
      m_dumpEntriesLoad(
          countField(QStringLiteral("dumpEntriesLoad"), tr(" entries"), 2'000'000'000)),
      m_dumpBytes(unitField(QStringLiteral("dumpBytes"), tr(" GiB"), 1 << 20))
{
    setWindowTitle(tr("Load Limits"));
    m_inflation->setObjectName(QStringLiteral("inflation"));
    m_inflation->setRange(0, 1'000'000);
    m_inflation->setSuffix(tr(" times"));
    m_inflation->setSpecialValueText(tr("no limit"));

    auto* form = new QFormLayout;
    form->addRow(tr("Events per trace file:"), m_traceEvents);
    form->addRow(tr("Trace events per load:"), m_traceEventsLoad);
    form->addRow(tr("Decompressed bytes per trace file:"), m_decompressed);
    form->addRow(tr("Decompressed trace bytes per load:"), m_decompressedLoad);
    form->addRow(tr("Inflation of a .gz trace (past its first %1 MiB):")
                     .arg(KinetoReader::Budget().inflationRatioFloor >> 20),
                 m_inflation);
    form->addRow(tr("Bytes per log file:"), m_logBytes);
    form->addRow(tr("Log bytes per load:"), m_logBytesLoad);
    form->addRow(tr("Log lines per file:"), m_logLinesFile);
    form->addRow(tr("Log lines per load:"), m_logLinesLoad);
    form->addRow(tr("Rank tags per launcher log:"), m_rankTagsFile);
    form->addRow(tr("Rank tags per load:"), m_rankTagsLoad);
    form->addRow(tr("Entries per Flight Recorder dump:"), m_dumpEntries);
    form->addRow(tr("Flight Recorder entries per load:"), m_dumpEntriesLoad);
    form->addRow(tr("Decoded bytes per pickled Flight Recorder dump:"), m_dumpBytes);

    auto* note = new QLabel(tr("A file over a limit keeps what was read and is marked truncated, "
                               "naming the limit. A load's limit is shared out evenly: the "
                               "files that need less than their share load whole, and the "
                               "others each get an equal share of what is left. Higher limits take "
                               "more memory and time: the "
                               "defaults fit a 16 GB desktop. They apply from the next load "
                               "(File > Reload)."));
    note->setWordWrap(true);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                         QDialogButtonBox::RestoreDefaults);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { setFields(ReadOptions{}); });

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    setFields(current);
}

void LoadLimitsDialog::setFields(const ReadOptions& options)
{
    m_traceEvents->setValue(double(options.traceBudget.maxEvents) / kMillion);
    m_traceEventsLoad->setValue(double(options.traceBudget.maxEventsPerLoad) / kMillion);
    m_decompressed->setValue(double(options.traceBudget.maxInflatedBytes) / kGiB);
    m_decompressedLoad->setValue(double(options.traceBudget.maxInflatedBytesPerLoad) / kGiB);
    m_inflation->setValue(
        int(std::min<std::int64_t>(options.traceBudget.maxInflationRatio, m_inflation->maximum())));
    m_logBytes->setValue(double(options.logBudget.bytesPerFile) / kGiB);
    m_logBytesLoad->setValue(double(options.logBudget.bytesPerLoad) / kGiB);
    m_logLinesFile->setValue(double(options.logBudget.linesPerFile) / kMillion);
    m_logLinesLoad->setValue(double(options.logBudget.linesPerLoad) / kMillion);
    m_rankTagsFile->setValue(options.logBudget.rankTagsPerFile);
    m_rankTagsLoad->setValue(options.logBudget.rankTagsPerLoad);
    m_dumpEntries->setValue(
        int(std::min<std::int64_t>(options.dumpBudget.maxEntries, m_dumpEntries->maximum())));
    m_dumpEntriesLoad->setValue(int(std::min<std::int64_t>(options.dumpBudget.maxEntriesPerLoad,
                                                           m_dumpEntriesLoad->maximum())));
    m_dumpBytes->setValue(double(options.dumpBudget.maxDecodedBytes) / kGiB);
}

ReadOptions LoadLimitsDialog::limits() const
{
    ReadOptions options = m_current;
    options.traceBudget.maxEvents = units(m_traceEvents, kMillion);
    options.traceBudget.maxEventsPerLoad = units(m_traceEventsLoad, kMillion);
    options.traceBudget.maxInflatedBytes = units(m_decompressed, kGiB);
    options.traceBudget.maxInflatedBytesPerLoad = units(m_decompressedLoad, kGiB);
    options.traceBudget.maxInflationRatio = m_inflation->value();
    options.logBudget.bytesPerFile = units(m_logBytes, kGiB);
    options.logBudget.bytesPerLoad = units(m_logBytesLoad, kGiB);
    options.logBudget.linesPerFile = units(m_logLinesFile, kMillion);
    options.logBudget.linesPerLoad = units(m_logLinesLoad, kMillion);
    options.logBudget.rankTagsPerFile = m_rankTagsFile->value();
    options.logBudget.rankTagsPerLoad = m_rankTagsLoad->value();
    options.dumpBudget.maxEntries = m_dumpEntries->value();
    options.dumpBudget.maxEntriesPerLoad = m_dumpEntriesLoad->value();
    options.dumpBudget.maxDecodedBytes = units(m_dumpBytes, kGiB);
    return options;
}

ReadOptions LoadLimitsDialog::saved()
{
    const QSettings settings;
    ReadOptions options;
    KinetoReader::Budget& trace = options.traceBudget;
    LogReader::Budget& log = options.logBudget;
    trace.maxEvents = savedValue(settings, kTraceEvents, trace.maxEvents);
    trace.maxEventsPerLoad = savedValue(settings, kTraceEventsLoad, trace.maxEventsPerLoad);
    trace.maxInflatedBytes = savedValue(settings, kDecompressed, trace.maxInflatedBytes);
    trace.maxInflatedBytesPerLoad =
        savedValue(settings, kDecompressedLoad, trace.maxInflatedBytesPerLoad);
    // 0 is a value of its own here: no inflation limit.
    bool ok = false;
    const qint64 ratio = settings.value(kInflation).toLongLong(&ok);
    if (ok && ratio >= 0) trace.maxInflationRatio = ratio;
    log.bytesPerFile = savedValue(settings, kLogBytes, log.bytesPerFile);
    log.bytesPerLoad = savedValue(settings, kLogBytesLoad, log.bytesPerLoad);
    log.linesPerFile = savedValue(settings, kLogLinesFile, log.linesPerFile);
    log.linesPerLoad = savedValue(settings, kLogLinesLoad, log.linesPerLoad);
    log.rankTagsPerFile = int(std::min<std::int64_t>(
        savedValue(settings, kRankTagsFile, log.rankTagsPerFile), std::numeric_limits<int>::max()));
    log.rankTagsPerLoad = int(std::min<std::int64_t>(
        savedValue(settings, kRankTagsLoad, log.rankTagsPerLoad), std::numeric_limits<int>::max()));
    FlightRecorderReader::Budget& dump = options.dumpBudget;
    dump.maxEntries = savedValue(settings, kDumpEntries, dump.maxEntries);
    dump.maxEntriesPerLoad = savedValue(settings, kDumpEntriesLoad, dump.maxEntriesPerLoad);
    dump.maxDecodedBytes = savedValue(settings, kDumpBytes, dump.maxDecodedBytes);
    return options;
}

void LoadLimitsDialog::save(const ReadOptions& options)
{
    QSettings settings;
    settings.setValue(kTraceEvents, qint64(options.traceBudget.maxEvents));
    settings.setValue(kTraceEventsLoad, qint64(options.traceBudget.maxEventsPerLoad));
    settings.setValue(kDecompressed, qint64(options.traceBudget.maxInflatedBytes));
    settings.setValue(kDecompressedLoad, qint64(options.traceBudget.maxInflatedBytesPerLoad));
    settings.setValue(kInflation, qint64(options.traceBudget.maxInflationRatio));
    settings.setValue(kLogBytes, qint64(options.logBudget.bytesPerFile));
    settings.setValue(kLogBytesLoad, qint64(options.logBudget.bytesPerLoad));
    settings.setValue(kLogLinesFile, qint64(options.logBudget.linesPerFile));
    settings.setValue(kLogLinesLoad, qint64(options.logBudget.linesPerLoad));
    settings.setValue(kRankTagsFile, qint64(options.logBudget.rankTagsPerFile));
    settings.setValue(kRankTagsLoad, qint64(options.logBudget.rankTagsPerLoad));
    settings.setValue(kDumpEntries, qint64(options.dumpBudget.maxEntries));
    settings.setValue(kDumpEntriesLoad, qint64(options.dumpBudget.maxEntriesPerLoad));
    settings.setValue(kDumpBytes, qint64(options.dumpBudget.maxDecodedBytes));
}

} // namespace rankscope
