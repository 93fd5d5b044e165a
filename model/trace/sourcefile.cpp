#include "model/trace/sourcefile.h"

namespace rankscope {

QString sourceKindName(SourceKind kind)
{
    switch (kind) {
    case SourceKind::Kineto:
        return QStringLiteral("kineto");
    case SourceKind::FlightRecorder:
        return QStringLiteral("flight_recorder");
    case SourceKind::HorovodTimeline:
        return QStringLiteral("horovod_timeline");
    case SourceKind::ElasticError:
        return QStringLiteral("elastic_error");
    case SourceKind::NcclLog:
        return QStringLiteral("nccl_log");
    case SourceKind::LauncherLog:
        return QStringLiteral("launcher_log");
    case SourceKind::Log:
        return QStringLiteral("log");
    case SourceKind::Unknown:
        return QStringLiteral("unknown");
    }
    return QStringLiteral("unknown");
}

QString sourceStatusName(SourceStatus status)
{
    switch (status) {
    case SourceStatus::Ok:
        return QStringLiteral("ok");
    case SourceStatus::Truncated:
        return QStringLiteral("truncated");
    case SourceStatus::Error:
        return QStringLiteral("error");
    }
    return QStringLiteral("error");
}

} // namespace rankscope
