#pragma once

#include "model/trace/loadshare.h"
#include "model/trace/ranklog.h"
#include "model/trace/sourcefile.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace rankscope {

// Indexes text logs line by line and picks out the facts triage needs (NCCL init/WARN/COLL,
// watchdog, fingerprints, environment, versions, steps, tracebacks, signals).
class LogReader {
public:
    static constexpr qsizetype kParseLimitBytes = 64 * 1024; // per line; longer lines: head only

    static constexpr qint64 kPollBytes = 1024 * 1024; // cancel and progress granularity

    struct Result {
        std::vector<RankLog> streams;
        QString message; // one line for the source: what was read, or why nothing was
        bool ok = true;
        bool truncated = false; // over a budget: what fit is kept and `message` says what was cut
        LoadLimit limit = LoadLimit::None; // the byte or line budget that cut it
        bool cancelled = false; // `Control::cancel` was seen; nothing of the file is kept
    };

    // What one file, and one load of many files, may cost; the defaults fit a 16 GB desktop (the
    // index costs 4 bytes a line, 8 in a combined log, on top of the file's bytes). A file over
    // budget keeps what fit, and the result says what was cut.
    struct Budget {
        qint64 bytesPerFile = qint64(4) << 30;
        // A log's bytes are held whole (the lines index into them), so the load's logs together
        // get a byte budget too: many large logs cannot add up past the desktop's memory.
        qint64 bytesPerLoad = qint64(8) << 30;
        qint64 linesPerFile = 200'000'000;
        qint64 linesPerLoad = 400'000'000;
        // Distinct rank tags of a combined log; lines tagged with a rank past the budget stay, tag
        // and all, in the log's untagged stream.
        int rankTagsPerFile = 4096;
        int rankTagsPerLoad = 16'384;
    };

    // The units of a load's log budgets in their LoadShare (loadShare()).
    enum class LoadUnit : std::size_t { Lines, RankTags, Bytes };
    // The per-load budgets of `budget` for the logs of one load to share, first come first
    // served (LoadSharing says why).
    static LoadShare loadShare(const Budget& budget);

    // For loads that run beside others: `cancel` is polled and `progressBytes` advanced (by the
    // bytes indexed so far, the file size in the end) once per kPollBytes. `load`, when given, is
    // shared by the files of one load (loadShare()) and holds the per-load budgets; without it
    // only the per-file ones apply.
    struct Control {
        const std::atomic<bool>* cancel = nullptr;
        std::atomic<std::int64_t>* progressBytes = nullptr;
        Budget budget;
        LoadShare* load = nullptr;
    };

    // A per-rank log: one stream with `rank` (may be empty). A combined log (`splitByTag`):
    // one stream per rank tag ([rank3]:, [default3]:, [1,3]<stderr>:, [3]<stderr>:,
    // "<timestamp> [rank3] ...") plus one rank-less stream for the untagged lines.
    static Result read(const QByteArray& bytes, const QString& sourcePath, int sourceIndex,
                       std::optional<int> rank, bool splitByTag);
    static Result readFile(const QString& absolutePath, const QString& sourcePath, int sourceIndex,
                           std::optional<int> rank, bool splitByTag);
    static Result read(const QByteArray& bytes, const QString& sourcePath, int sourceIndex,
                       std::optional<int> rank, bool splitByTag, const Control& control);
    static Result readFile(const QString& absolutePath, const QString& sourcePath, int sourceIndex,
                           std::optional<int> rank, bool splitByTag, const Control& control);
    // Reads through the descriptor discovery opened (SourceFile::openForReading).
    static Result readSource(const SourceFile& source, int sourceIndex, bool splitByTag,
                             const Control& control);

    // Rank tag at the start of a combined-log line; `contentStart` is where the rank's own text
    // begins (after the tag, or 0 when the tag is part of the text).
    static std::optional<int> rankTag(QByteArrayView line, qsizetype* contentStart);
    // Timestamp at the start of a line; see RankLog::timestampNs. `yearHint` fills in the year for
    // glog/torch stamps that omit it (0: unknown).
    static std::optional<std::int64_t> parseTimestamp(QByteArrayView line, int yearHint,
                                                      bool* hasDate, int* year = nullptr);

private:
    // read() of bytes the result may share as they are.
    static Result readShared(std::shared_ptr<const QByteArray> bytes, const QString& sourcePath,
                             int sourceIndex, std::optional<int> rank, bool splitByTag,
                             const Control& control);
    // The file's first maxBytes read into `bytes`; false (and `r` says why) on a cancel or an
    // error. `cut`: the file holds more.
    static bool readInto(QFile& file, qint64 maxBytes, const Control& control, QByteArray& bytes,
                         Result& r, bool& cut);
    static Result readOpened(QFile& file, const QString& sourcePath, int sourceIndex,
                             std::optional<int> rank, bool splitByTag, const Control& control);
};

} // namespace rankscope
