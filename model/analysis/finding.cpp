#include "model/analysis/finding.h"

#include <utility>

namespace rankscope {

namespace {

// The one table of names, both ways.
constexpr std::pair<FindingKind, std::string_view> kKindNames[] = {
    {FindingKind::CollectiveMismatch, "collective_mismatch"},
    {FindingKind::Hang, "hang"},
    {FindingKind::Desync, "desync"},
    {FindingKind::Straggler, "straggler"},
    {FindingKind::IdleGpu, "idle_gpu"},
    {FindingKind::Crash, "crash"},
    {FindingKind::SetupFailure, "setup_failure"},
    {FindingKind::ConfigMismatch, "config_mismatch"},
    {FindingKind::MissingRanks, "missing_ranks"},
    {FindingKind::UnpairedCollectives, "unpaired_collectives"},
    {FindingKind::MixedJobs, "mixed_jobs"},
    {FindingKind::LogSymptom, "log_symptom"},
};

constexpr std::pair<Severity, std::string_view> kSeverityNames[] = {
    {Severity::Error, "error"},
    {Severity::Warning, "warning"},
    {Severity::Info, "info"},
};

template <typename Enum, std::size_t N>
std::string nameOf(const std::pair<Enum, std::string_view> (&table)[N], Enum value)
{
    for (const auto& [v, name] : table)
        if (v == value) return std::string(name);
    return {};
}

template <typename Enum, std::size_t N>
std::optional<Enum> valueOf(const std::pair<Enum, std::string_view> (&table)[N],
                            std::string_view name)
{
    for (const auto& [v, n] : table)
        if (n == name) return v;
    return std::nullopt;
}

} // namespace

std::string findingKindName(FindingKind kind)
{
    return nameOf(kKindNames, kind);
}

std::string severityName(Severity severity)
{
    return nameOf(kSeverityNames, severity);
}

std::optional<FindingKind> findingKindFromName(std::string_view name)
{
    return valueOf(kKindNames, name);
}

std::optional<Severity> severityFromName(std::string_view name)
{
    return valueOf(kSeverityNames, name);
}

Evidence Evidence::cited() const
{
    Evidence e;
    e.path = path;
    e.line = line;
    e.text = text;
    e.rank = rank;
    return e;
}

} // namespace rankscope
