#pragma once

#include <QByteArrayView>
#include <QList>
#include <cstdint>

namespace rankscope {

// What a line of a pasted issue report is. A raw first post is more than the reporter's words:
// an issue template's headings, checkboxes and instructions ("OS (e.g. two machines with 8 GPUs
// each)"), environment dumps (collect_env, ds_report, `accelerate env`, pip and conda lists,
// config blocks) and code name NCCL, timeouts, checkpoints and pretrained models whatever went
// wrong. Those words are not what the reporter says happened, so prose cues and stage context
// should not read them; the program's output (logs, tracebacks, error lines) they do read.
enum class ReportLine : std::uint8_t {
    Prose,       // the reporter's words, the title, and any line none of the others describes
    Output,      // program output inside a code block: log lines, tracebacks, error messages
    Scaffold,    // template scaffolding: headings, checkboxes, instructions, HTML comments, fences
    Environment, // version and environment dumps, package lists, config key-value blocks
    Code,        // source code
    Command,     // shell commands ("torchrun --nnodes 2 ...", "pip install ...")
    // An import statement a traceback quotes under a frame: the program failed while importing
    // it (the package stage), but its module names ("datasets", "Iterator") are not what happened.
    Import,
};

// The kind of each of the first `lineLimit` lines of `text` (lineStarts: the byte offset where
// each line begins, as SignatureSet::lineStartsOf gives them), in one pass over those lines. The
// first non-empty line is the title: Prose.
QList<ReportLine> reportLineKinds(QByteArrayView text, const QList<qsizetype>& lineStarts,
                                  qsizetype lineLimit);

// Where a Python traceback frame line ('  File "/usr/lib/x.py", line 12, in f') leaves its path:
// the offset in `line` of the '", line ' after it, or -1 when the line is no frame.
qsizetype tracebackFramePathEnd(QByteArrayView line);

// Whether prose cues read a line of this kind. Not code or commands: every reproduction names
// from_pretrained, init_process_group, NCCL_SOCKET_IFNAME or pip install, whatever went wrong.
constexpr bool readsAsProse(ReportLine kind)
{
    return kind == ReportLine::Prose || kind == ReportLine::Output;
}

// Whether stage context reads a line of this kind: a command too (how many hosts a launcher
// joins is how the job was set up) and an import a traceback quotes (where it failed), not the
// source every reproduction script shares.
constexpr bool readsAsContext(ReportLine kind)
{
    return readsAsProse(kind) || kind == ReportLine::Command || kind == ReportLine::Import;
}

} // namespace rankscope
