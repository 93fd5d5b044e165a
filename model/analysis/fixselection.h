#pragma once

#include "model/analysis/analysiscontext.h"
#include "model/analysis/collectivematcher.h"
#include "model/analysis/finding.h"

#include <vector>

namespace rankscope {

// Chooses each finding's fixes from its evidence (taxonomy/fix_rules.json): what a trace
// finding's collective shows (a rank that never issued it, an op, size or dtype that differs,
// a rank that ran fewer steps, a rank that enqueued it and never started it while the others
// did) joins the conditions its producer set, and the first rule that
// matches the finding's kind, leaf and conditions orders the fixes and gives the reason.
// A hang or desync that blames no rank, or every rank left waiting to receive, also takes what
// the job's traces show at their end: every rank (of `ranks`, the job's) held in a receive and
// none sending. Findings that already carry fixes keep them.
void chooseFixes(std::vector<Finding>& findings, const AnalysisContext& ctx,
                 const std::vector<CollectiveGroup>& groups, const std::vector<int>& ranks);

} // namespace rankscope
