#include "views/timeline/timelinecolors.h"

#include <QObject>
#include <algorithm>
#include <cctype>

namespace rankscope::timelinecolors {

namespace {

std::uint32_t fnv1a(std::string_view s)
{
    std::uint32_t h = 2166136261u;
    for (unsigned char c : s) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

bool startsWith(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

} // namespace

bool isCommunicationName(std::string_view name)
{
    std::string lower(name.substr(0, 64));
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return lower.find("nccl") != std::string::npos || startsWith(lower, "gloo") ||
           startsWith(lower, "c10d::") || startsWith(lower, "record_param_comms") ||
           startsWith(lower, "horovod") || lower.find("allreduce") != std::string::npos;
}

QColor eventColor(std::string_view name, EventCategory category)
{
    const std::uint32_t h = fnv1a(name);
    const int a = int(h % 997), b = int((h / 997) % 61), c = int((h / 60817) % 41);
    const bool comm = category == EventCategory::CommKernel || isCommunicationName(name);
    if (comm) return QColor::fromHsv(a % 36, 170 + b, 200 + c);
    switch (category) {
    case EventCategory::Kernel:
        return QColor::fromHsv(195 + a % 80, 110 + b, 185 + c);
    case EventCategory::Memcpy:
        return QColor::fromHsv(95 + a % 45, 140 + b, 170 + c);
    case EventCategory::Memset:
        return QColor::fromHsv(45 + a % 15, 170 + b, 200 + c);
    default:
        return QColor::fromHsv(40 + a % 290, 55 + b, 205 + c);
    }
}

QColor textColorOn(QColor fill)
{
    const int luma = (fill.red() * 299 + fill.green() * 587 + fill.blue() * 114) / 1000;
    return luma > 135 ? QColor(20, 20, 20) : QColor(250, 250, 250);
}

QRgb shadedColumn(QRgb fill, QRgb background, float busy)
{
    const int alpha = busy >= 0.75f ? 256 : busy >= 0.4f ? 200 : busy >= 0.1f ? 150 : 100;
    const auto mix = [alpha](int f, int g) { return (f * alpha + g * (256 - alpha)) >> 8; };
    return qRgb(mix(qRed(fill), qRed(background)), mix(qGreen(fill), qGreen(background)),
                mix(qBlue(fill), qBlue(background)));
}

QColor rankStateColor(RankState state)
{
    switch (state) {
    case RankState::Idle:
        return {196, 200, 212}; // visible as a 1-px row on the strip background
    case RankState::HostBusy:
        return {30, 160, 150}; // teal: busy, but neither the device's blue nor a stall's amber
    case RankState::Computing:
        return {70, 125, 205};
    case RankState::Communicating:
        return {200, 60, 50};
    case RankState::Waiting:
        return {250, 180, 30};
    case RankState::Stopped:
        return {95, 95, 105};
    case RankState::Crashed:
        return {25, 10, 20};
    }
    return {};
}

QString rankStateDescription(RankState state)
{
    switch (state) {
    case RankState::Idle:
        return QObject::tr("no event open on any of its threads or streams");
    case RankState::HostBusy:
        return QObject::tr("running its own host code (a CPU span is open) while no kernel, "
                           "op or collective runs, e.g. stuck in a data loader");
    case RankState::Computing:
        return QObject::tr("GPU kernels, memory copies (CPU ops on a rank without a GPU)");
    case RankState::Communicating:
        return QObject::tr("in a collective once every member arrived");
    case RankState::Waiting:
        return QObject::tr("in a collective before the last member arrived, or one that never "
                           "finished");
    case RankState::Stopped:
        return QObject::tr("no more events while the job's trace goes on");
    case RankState::Crashed:
        return QObject::tr("no more events, and a finding says it crashed");
    }
    return {};
}

QString rankStateName(RankState state)
{
    switch (state) {
    case RankState::Idle:
        return QObject::tr("idle");
    case RankState::HostBusy:
        return QObject::tr("in host code");
    case RankState::Computing:
        return QObject::tr("computing");
    case RankState::Communicating:
        return QObject::tr("communicating");
    case RankState::Waiting:
        return QObject::tr("waiting for others");
    case RankState::Stopped:
        return QObject::tr("stopped");
    case RankState::Crashed:
        return QObject::tr("crashed");
    }
    return {};
}

int latenessStep(std::int64_t excessNs)
{
    int step = 0;
    for (std::int64_t bound = 100'000; step + 1 < kLatenessSteps && excessNs >= bound; bound *= 10)
        ++step;
    return step;
}

QColor latenessStepColor(int step)
{
    static const QColor steps[kLatenessSteps] = {
        {214, 214, 224}, {240, 180, 222}, {222, 105, 190}, {180, 25, 140}, {105, 0, 80}};
    return steps[std::clamp(step, 0, kLatenessSteps - 1)];
}

QString latenessStepLabel(int step)
{
    static const char* const labels[kLatenessSteps] = {"<0.1", "0.1", "1", "10", "100+"};
    return QLatin1String(labels[std::clamp(step, 0, kLatenessSteps - 1)]);
}

} // namespace rankscope::timelinecolors
