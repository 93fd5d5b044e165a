#pragma once

#include "model/overview/rankactivity.h"
#include "model/store/eventstore.h"

#include <QColor>
#include <string_view>

namespace rankscope {

// Colours of the timeline. An event's colour comes from a stable hash of its name (the same name
// has the same colour in every session), inside a hue family per kind: compute kernels in blues
// and violets, communication (NCCL kernels, gloo/c10d/nccl spans) in reds and oranges, memcpy in
// greens, memset in yellows, CPU-side spans in pale tones of the remaining hues.
namespace timelinecolors {

bool isCommunicationName(std::string_view name);
QColor eventColor(std::string_view name, EventCategory category);
QColor textColorOn(QColor fill);
// Colour of a level-of-detail column that is busy for `busy` (0..1) of its span, quantised so
// that neighbouring columns merge into runs.
QRgb shadedColumn(QRgb fill, QRgb background, float busy);

inline const QColor kBackgroundEven{255, 255, 255};
inline const QColor kBackgroundOdd{246, 246, 250};
inline const QColor kRankHeader{228, 230, 238};
inline const QColor kLabelColumn{240, 240, 244};
inline const QColor kFindHit{255, 200, 0};
inline const QColor kSelection{20, 20, 20};
// A selected collective's peers, its arrival skew, and the chart's "arrived after" bars.
inline const QColor kArrivalSkew{200, 0, 160};

// The rank overview's states: busy in blues (computing) and reds (communicating) as in the
// lanes, waiting in amber so that a stall stands out from both, busy in host code teal (a rank
// stuck in its own code is not idle), idle pale, stopped and crashed dark so that a rank that
// went away reads as a hole.
QColor rankStateColor(RankState state);
QString rankStateName(RankState state);
// One sentence of what the state means, for the legend's tooltip.
QString rankStateDescription(RankState state);

// The rank overview's lateness gutter: how much later than the job's typical rank a rank arrives
// at collectives (the median over them, RankActivity), in decades from 0.1 ms: step 0 (under
// 0.1 ms) pale grey, then ever deeper magenta, the arrival wavefront's hue. A straggler late by a
// few milliseconds at every collective is invisible on its row at whole-trace zoom (sub-pixel)
// but reads here at any zoom.
inline constexpr int kLatenessSteps = 5;
int latenessStep(std::int64_t excessNs);
QColor latenessStepColor(int step);
// The step's bounds in ms for the legend: "<0.1", "0.1", "1", "10", "100+".
QString latenessStepLabel(int step);

} // namespace timelinecolors
} // namespace rankscope
