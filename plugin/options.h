// options.h — the plugin's options: what this compile asked for, the parser
// that fills it in and the help text.
//
// Two kinds, both -fplugin-arg-ballarus-KEY=VALUE:
//   * the options a user chooses (mode, weights, update, path-table-max,
//     path-storage, early-termination, dump, help): what is profiled, how it
//     is counted and stored;
//   * the tuning switches, tune-NAME=VALUE (tune-help lists them): the
//     mechanisms behind the defaults, kept so that the benchmarks can compare
//     each with its alternative (docs/DESIGN.md, "Tuning switches").  Their
//     defaults are the mechanisms that measured best.
//
// Options come from the command line only, never from environment variables
// read by the compiler.  A bad option is a GCC error naming the option, and
// plugin_init (plugin.cc) then fails the compile.
#ifndef BALLARUS_PLUGIN_OPTIONS_H_
#define BALLARUS_PLUGIN_OPTIONS_H_

#include <cstdint>
#include <string>

#include "plugin/profile_weights.h"

struct plugin_name_args;  // gcc-plugin.h

namespace ballarus::plugin {

// The user options' help, made from the option table (options.cc):
// -fplugin-arg-ballarus-help prints it; plugin_init also registers it as the
// plugin's help (PLUGIN_INFO).
extern const char* const kHelp;

enum class Mode { kNaive, kEdge, kNone };
enum class WeightKind { kHeuristic, kGcc, kUniform, kProfile };
// kTls: update=thread counting in static TLS in code for executables
// (thread_counters.cc); everywhere else it is kThread.
enum class Update { kDefault, kSingle, kAtomic, kThread, kTls };

struct Options {
  Mode mode = Mode::kNone;  // edge counters: naive, edge, or none (path only)
  bool paths = true;        // Ball-Larus path profiling (default mode=path)
  bool trace = false;       // mode=trace: witnesses (trace_emit.h), no counts
  // mode=trace-naive: the block index written at every block's start
  // instead of the witnesses (the reference trace for checking).
  bool trace_naive = false;
  uint64_t path_table_max = 4096;
  // path-storage=hash: functions above path_table_max count their paths in
  // the runtime's hash table instead of being cut to fit a dense one.
  bool path_storage_hash = false;
  // The tuning switches, tune-NAME (options.cc kTuneOptions; docs/DESIGN.md
  // "Tuning switches"), up to estimator.
  // tune-path-hoist=off: path ends stay where they are (for comparison).
  bool path_hoist = true;
  // tune-path-returns=off: pre-count before every call that may not return,
  // even to functions of the TU that always return (for comparison).
  bool path_returns = true;
  // tune-path-signed=off: an unsigned path register everywhere (for
  // comparison).
  bool path_signed = true;
  // tune-path-register=pointer (default): in a dense table, the path
  // register is the address of the counter of the path so far; number: the
  // path number, counted at counters[base + min(r, n_paths)].
  bool path_pointer = true;
  // tune-path-loops: loops whose iterations take one path count them in
  // locals (core FindCountedLoops) -- kProfile: only where an earlier profile
  // (weights=profile=) shows at least 8 iterations per entry; kOn: wherever
  // the weights say the loop iterates; kOff: never.
  enum class PathLoops { kProfile, kOn, kOff };
  PathLoops path_loops = PathLoops::kProfile;
  // tune-path-loop-cuts: a loop whose iterations take one path ends the path
  // that enters it on each entry edge (a cut edge, as its back edge is),
  // so every iteration ends the same path at a constant counter
  // (path_cuts.cc) -- kAuto (default): in mode=path, and in mode=edge,path
  // unless tune-path-derive=off (the cut's counts then cost more than they
  // save); kOff: only back edges are cut.
  // The value of an option taking auto, on or off.
  enum class AutoOnOff { kAuto, kOn, kOff };
  // Whether such an option is on, kAuto meaning `when_auto`.
  static bool IsOn(AutoOnOff v, bool when_auto) {
    return v == AutoOnOff::kOn || (v == AutoOnOff::kAuto && when_auto);
  }
  AutoOnOff path_loop_cuts = AutoOnOff::kAuto;
  // tune-path-call-cuts: a block whose call may not return and which several
  // path prefixes reach is cut (paths end on entering it and start afresh
  // there), so the register need not live across the call
  // (path_cuts.cc) -- kAuto (default): in mode=path; kOff: never.
  AutoOnOff path_call_cuts = AutoOnOff::kAuto;
  // tune-path-goto-targets: a computed goto's targets set the path register at
  // their start instead of the goto (path_entries.cc) -- kAuto (default):
  // unless the weights are an earlier profile's counts; kOff: the goto
  // resets it.
  AutoOnOff path_goto_targets = AutoOnOff::kAuto;
  // tune-path-from-edges: a function whose paths its edge counts determine
  // (core/path_profile.h PathsDeterminedByEdges) gets edge counters on the
  // chords of a spanning tree instead of the path register -- kAuto
  // (default): so, unless every path table is to be hashed
  // (path-storage=hash or path-table-max=0); kOn: so; kOff: every
  // function gets the register.
  AutoOnOff path_from_edges = AutoOnOff::kAuto;
  // tune-path-derive: with edge counters in the same build (mode=edge,path or
  // naive,path), a path count made where one path prefix reaches (the
  // register a known constant: a path end, a pre-count, a cut) is not
  // made; reconstruct takes it from the edge or block count there
  // (PathInfo::derived) -- kAuto (default) and kOn: so; kOff: every
  // count is made (for comparison).  Without edge counters: off.
  AutoOnOff path_derive = AutoOnOff::kAuto;
  // tune-path-balance=off: in mode=path, every pre-count is made; by default
  // one per loop header or cut block is taken from the balance of the
  // paths that start there (path_counts.cc PlanBalances).
  bool path_balance = true;
  // tune-path-cut-hoist=off: a cut block counts the path ending at it at its
  // start; by default the count goes back onto the edges into it, where
  // the register is a constant (path_hoist.cc).
  bool path_cut_hoist = true;
  // tune-path-precount-hoist=off: an early-termination pre-count is made in the
  // call's block; by default, where several path prefixes reach the block,
  // it goes back onto the edges into it, where the register is a constant
  // (path_ends.cc HoistPreCount).
  bool path_precount_hoist = true;
  // tune-path-entry-balance=off: in mode=path, the pre-counts on a function's
  // way in are all made; by default one is taken from the balance of the
  // function's calls where all of them are direct calls from
  // path-profiled functions of the TU (path_counts.cc FindEntryTruncation).
  bool path_entry_balance = true;
  // tune-entry-calls=off: in edge mode every function counts its own entry;
  // by default a function whose every call is a direct call from a function
  // of the TU takes its entry count from its callers' call blocks
  // (entry_calls.cc ChooseEntryCalls).
  bool entry_calls = true;
  // tune-loop-barrier=off: a counter updated on every iteration of a loop is a
  // plain update; by default, in a loop that may read or write memory a
  // counter may be, an empty asm after it keeps GCC's PRE from carrying
  // the counter's value across iterations (counter_emit.cc
  // AppendCounterAdd).
  bool loop_barrier = true;
  // tune-loop-registers: in a counted loop with no call (but quiet ones), asm
  // or statement that may throw, entered and left by ordinary edges,
  // counters with a fixed address are counted in locals -- registers --
  // and added to the counters on the loop's exits, as GCC's LIM does for
  // gcov's counters (loop_registers.h, FindRegisterLoops).  auto: with
  // update=single and -O1 and up, every such loop with path profiling
  // (mode=path, edge,path, naive,path), only tight loops (12 statements or
  // fewer: core/loop_register_policy.cc) in edge mode.
  AutoOnOff loop_registers = AutoOnOff::kAuto;
  // tune-path-keep-tails=off: GCC cross-jumps as usual; by default not in a
  // function whose computed goto (or cut block) had its path end counted
  // on the edges into it (pass.cc KeepTailsApart).
  bool path_keep_tails = true;
  // tune-thread-gs=on (default): update=thread in x86-64 code for
  // executables counts with update=single's add through %gs, `addq $1,
  // %gs:counter(%rip)`, the thread's %gs base set to its copy's distance
  // from the shared counters (thread_counters.cc); off: the thread-local
  // pointer, as in -fPIC code.
  bool thread_gs = true;
  // tune-inline-sizes=off: GCC's inliner sizes each function with its
  // instrumentation; by default without it, as in the plain build
  // (inline_sizes.h).
  bool inline_sizes = true;
  // tune-estimator: the static estimate behind weights=heuristic --
  // kBallLarus (default): Ball & Larus' loop-based weighting
  // (estimator/estimator.h); kWuLarus: Wu & Larus' branch heuristics
  // combined by Dempster-Shafer (estimator/wu_larus.h).
  enum class Estimator { kBallLarus, kWuLarus };
  Estimator estimator = Estimator::kBallLarus;
  // The user options again: early-termination, weights, update, dump.
  bool early_termination = true;
  WeightKind weights = WeightKind::kHeuristic;
  std::string profile_path;
  Update update = Update::kDefault;
  bool dump = false;
  // tune-path-use=FILE: the -fprofile-use compile copies hot path chains by
  // FILE's path profile (path_dup.h) and instruments nothing.
  std::string path_use;
};

// This compile's options, filled in by ParseOptions.
extern Options g_options;
// weights=profile=FILE: that profile, loaded by plugin_init.
extern ballarus::ProfileWeights g_profile_weights;

// Parses the plugin's arguments into g_options.  Reports every bad option
// through GCC's error() and returns false if there was one.
bool ParseOptions(const plugin_name_args* info);

}  // namespace ballarus::plugin

#endif  // BALLARUS_PLUGIN_OPTIONS_H_
