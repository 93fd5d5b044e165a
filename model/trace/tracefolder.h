#pragma once

#include "model/trace/sourcefile.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <algorithm>
#include <functional>

namespace rankscope {

// The files of one trace folder, each classified by content and attributed to a rank where
// that can be told. Discovery only reads the head of each file; the readers do the rest.
class TraceFolder {
public:
    // Walks `dir` recursively without following links out of it. `cancelled` is polled per file.
    static TraceFolder discover(const QString& dir, const std::function<bool()>& cancelled = {});

    bool isValid() const { return m_error.isEmpty(); }
    QString error() const { return m_error; } // why the folder itself could not be read
    QString path() const { return m_path; }

    const QList<SourceFile>& sources() const { return m_sources; }
    QList<SourceFile> sourcesOfRank(int rank) const;
    QList<SourceFile> unattributedSources() const;
    QList<int> ranks() const; // sorted, distinct
    // Largest rank seen + 1, or the world size a source states, whichever is larger; 0 if none.
    int worldSize() const { return m_worldSize; }
    qint64 totalBytes() const;

    // Classification of one file from its name and first bytes; exposed for tests.
    static SourceKind sniffKind(const QString& fileName, const QByteArray& head);
    // Rank from a file name: rank3, rank-3, rank_3, worker3, ..._rank_3.json, nccl_trace_rank_3.
    static std::optional<int> rankFromFileName(const QString& fileName);
    // Rank of one file, in order: distributedInfo.rank in a Kineto head, the Flight Recorder
    // file-name suffix, file-name patterns, the NCCL init line of an NCCL log. `evidence` says
    // which; `statedWorldSize` gets distributedInfo.world_size / nranks / world_size= (or 0).
    static std::optional<int> attributeRank(const QString& fileName, SourceKind kind,
                                            const QByteArray& head, QString* evidence,
                                            int* statedWorldSize);

    // Problems of the folder as a whole, e.g. two files of one kind claiming the same rank.
    const QStringList& warnings() const { return m_warnings; }
    // The readers report what they found in a source; index into sources().
    void setSourceStatus(int index, SourceStatus status, const QString& message);
    // A reader found ranks beyond what discovery saw (a Horovod timeline names every rank that
    // reported ready); the world size grows to `worldSize`, never shrinks.
    void noteWorldSize(int worldSize) { m_worldSize = std::max(m_worldSize, worldSize); }

private:
    QString m_path;
    QString m_error;
    QList<SourceFile> m_sources;
    QStringList m_warnings;
    int m_worldSize = 0;
};

} // namespace rankscope
