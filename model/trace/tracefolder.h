#pragma once

#include "model/trace/sourcefile.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <algorithm>
#include <functional>

namespace rankscope {

// The files of one trace folder, each classified by content and attributed to a rank where
// that can be told. Discovery opens each file once (see SourceDescriptor) and reads its head and
// tail (a compressed file: the head of what it inflates to); the readers do the rest.
class TraceFolder {
public:
    // Walks `dir` recursively; a link is followed only to a regular file inside the folder, and
    // anything else (FIFO, socket, device, link out or in a loop) is listed with status Error and
    // a reason, never opened in blocking mode. `cancelled` is polled per file.
    static TraceFolder discover(const QString& dir, const std::function<bool()>& cancelled = {});
    // A folder as discover() listed it, restored from a record of it (a digest): the sources
    // with their discovery-time rank, status and message, the warnings and world sizes; or,
    // with `error`, the reason the record could not be read (isValid() is then false).
    static TraceFolder restore(const QString& path, QList<SourceFile> sources, QStringList warnings,
                               int worldSize, int statedWorldSize, const QString& error = {});

    bool isValid() const { return m_error.isEmpty(); }
    QString error() const { return m_error; } // why the folder itself could not be read
    QString path() const { return m_path; }

    const QList<SourceFile>& sources() const { return m_sources; }
    QList<SourceFile> sourcesOfRank(int rank) const;
    QList<SourceFile> unattributedSources() const;
    QList<int> ranks() const; // sorted, distinct
    // Largest rank seen + 1, or the world size a source states, whichever is larger; 0 if none.
    int worldSize() const { return m_worldSize; }
    // Only the world size a source states (distributedInfo.world_size, a Horovod timeline's
    // ranks), 0 if none: a rank number alone says the job had at least that many ranks, not
    // how many, so nothing may call the ranks below it missing.
    int statedWorldSize() const { return m_statedWorldSize; }
    qint64 totalBytes() const;

    // Classification of one file from its name and first bytes (decompressed, for a gzip file);
    // exposed for tests.
    static SourceKind sniffKind(const QString& fileName, const QByteArray& head);
    // Why a file whose name claims a format (.json, .json.gz, .pkl, nccl_trace_rank_*, .log) is
    // not that format, in one line; empty when it is, or when the name claims nothing.
    static QString formatProblem(const QString& fileName, bool gzip, SourceKind kind,
                                 const QByteArray& head);
    // Rank from a file name: rank3, rank-3, rank_3, worker3, ..._rank_3.json, nccl_trace_rank_3.
    static std::optional<int> rankFromFileName(const QString& fileName);
    // Rank of one file, in order: distributedInfo.rank in a Kineto trace's head or tail, the NCCL
    // init line of an NCCL log, the Flight Recorder file-name suffix, file-name patterns. Content
    // beats the name, and `evidence` says so when they disagree; when no rank can be told it
    // says why: what was looked for and not found ("states no rank: no distributedInfo, no rank
    // in its name"), or the rank stated that cannot be one ("no rank: ... is out of range").
    // `stated` gets what the content states of its job: distributedInfo.world_size / backend /
    // pg_config, or a log's nranks / world_size= (empty fields when nothing is stated).
    static std::optional<int> attributeRank(const QString& fileName, SourceKind kind,
                                            const QByteArray& head, const QByteArray& tail,
                                            QString* evidence, StatedJob* stated);
    // A rank as a file states it, if it can be one (0 .. kMaxRank).
    static constexpr qint64 kMaxRank = 1'000'000;

    // Problems of the folder as a whole, e.g. two files of one kind claiming the same rank.
    const QStringList& warnings() const { return m_warnings; }
    // The readers report what they found in a source; index into sources().
    void setSourceStatus(int index, SourceStatus status, const QString& message,
                         LoadLimit limit = LoadLimit::None);
    void setSourceNcclVersion(int index, const QString& version);
    // What a reader found the source states of its job (distributedInfo deep in a file, the
    // clock range of its events): the fields it sets replace discovery's; the folder's world
    // size grows to the stated one.
    void setSourceStatedJob(int index, const StatedJob& stated);
    void setSourceGzipIndex(int index, std::shared_ptr<const GzipIndex> gzipIndex);
    // The Kineto reader read distributedInfo.rank where discovery could not (the tail of a
    // compressed file, the middle of a large one): the content wins over the name or an assumed
    // rank, the evidence says so, and the rank claims are checked again. True when the source's
    // rank changed (its events then move to the new rank, or to -1 when it has none).
    bool attributeStatedRank(int index, qint64 statedRank);
    // The Kineto reader read all of a trace and it states no distributedInfo.rank: a source
    // still without a rank says why, now from the whole file (`distributedInfoSeen`: the trace
    // has distributedInfo, without a rank) rather than from what discovery read of it.
    void noteNoStatedRank(int index, bool distributedInfoSeen);
    // A reader found ranks beyond what discovery saw (a Horovod timeline names every rank that
    // reported ready); the world size grows to `worldSize`, never shrinks.
    void noteWorldSize(int worldSize)
    {
        m_worldSize = std::max(m_worldSize, worldSize);
        m_statedWorldSize = std::max(m_statedWorldSize, worldSize);
    }

private:
    void checkClaims();
    void assumeLoneTraceRank();

    QString m_path;
    QString m_error;
    QList<SourceFile> m_sources;
    QStringList m_warnings;
    int m_worldSize = 0;
    int m_statedWorldSize = 0;
};

} // namespace rankscope
