// options.cc — parses -fplugin-arg-ballarus-KEY=VALUE into g_options.
//
// Two tables hold every option: kUserOptions, the decisions a user makes,
// and kTuneOptions, the tuning switches (tune-NAME).  Each row names the
// option, the values it takes, what it decides (the help text is made from
// the rows) and the function that parses its value.  When a key is given
// several times the last one wins (the wrappers put their own mode= first
// so the user's wins).

#include "plugin/options.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin/profile_weights.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"

namespace ballarus::plugin {

Options g_options;
ballarus::ProfileWeights g_profile_weights;

namespace {

const char kPluginName[] = "ballarus";

// One option of -fplugin-arg-ballarus-KEY=VALUE.
struct OptionSpec {
  const char* key;
  const char* values;  // what VALUE may be, for the help; nullptr: no value
  const char* help;    // what it decides: lines of the help, each ending '\n'
  // Sets g_options from VALUE (nullptr when none was given); false, with an
  // error naming the option, if VALUE is not one it takes.
  bool (*parse)(const OptionSpec& spec, const char* value);
  bool Options::*flag = nullptr;               // for ParseOnOff
  Options::AutoOnOff Options::*tri = nullptr;  // for ParseAutoOnOff
};

// Reports VALUE as not one of SPEC's values ("a|b|c" read "a, b or c").
bool BadValue(const OptionSpec& spec, const char* value) {
  std::string expected = spec.values ? spec.values : "";
  const size_t last = expected.rfind('|');
  if (last != std::string::npos) expected.replace(last, 1, " or ");
  for (size_t bar; (bar = expected.find('|')) != std::string::npos;)
    expected.replace(bar, 1, ", ");
  error("ballarus: unknown value %qs for %<-fplugin-arg-ballarus-%s%> "
        "(expected %s)",
        value ? value : "", spec.key, expected.c_str());
  return false;
}

// The index of VALUE among SPEC's values ("a|b|c"), or -1.
int ValueIndex(const OptionSpec& spec, const char* value) {
  if (value == nullptr || spec.values == nullptr) return -1;
  const size_t n = strlen(value);
  int index = 0;
  for (const char* p = spec.values;; ++index) {
    const char* bar = strchr(p, '|');
    const size_t len = bar ? size_t(bar - p) : strlen(p);
    if (len == n && strncmp(p, value, n) == 0) return index;
    if (bar == nullptr) return -1;
    p = bar + 1;
  }
}

bool ParseOnOff(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // values "on|off"
  if (i < 0) return BadValue(spec, value);
  g_options.*spec.flag = i == 0;
  return true;
}

bool ParseAutoOnOff(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // values "auto|on|off"
  if (i < 0) return BadValue(spec, value);
  g_options.*spec.tri = i == 0   ? Options::AutoOnOff::kAuto
                        : i == 1 ? Options::AutoOnOff::kOn
                                 : Options::AutoOnOff::kOff;
  return true;
}

bool ParseMode(const OptionSpec& spec, const char* value) {
  static const struct {
    const char* name;
    Mode mode;
    bool paths;
  } kModes[] = {
      {"edge", Mode::kEdge, false},       {"naive", Mode::kNaive, false},
      {"path", Mode::kNone, true},        {"edge,path", Mode::kEdge, true},
      {"path,edge", Mode::kEdge, true},   {"naive,path", Mode::kNaive, true},
      {"path,naive", Mode::kNaive, true},
  };
  if (value == nullptr) {
    error("ballarus: option %<-fplugin-arg-ballarus-mode%> needs a value "
          "(edge, naive, path, edge,path, trace or trace-naive)");
    return false;
  }
  g_options.trace_naive = strcmp(value, "trace-naive") == 0;
  g_options.trace = g_options.trace_naive || strcmp(value, "trace") == 0;
  if (g_options.trace) {
    g_options.mode = Mode::kNone;
    g_options.paths = false;
    return true;
  }
  for (const auto& m : kModes) {
    if (strcmp(value, m.name) != 0) continue;
    g_options.mode = m.mode;
    g_options.paths = m.paths;
    return true;
  }
  return BadValue(spec, value);
}

// GCC 12's plugin-argument parser (plugin.cc, parse_plugin_arg_opt) drops
// one character from the end of a value for every '=' inside it, so
// "weights=profile=FILE" arrives with FILE cut short.  The compiler's own
// record of the command line is intact: take the value from there (the last
// such option, as the last option wins).
std::string RawWeightsProfile(const std::string& truncated) {
  const std::string prefix = std::string(kPluginName) + "-weights=profile=";
  std::string found;
  for (unsigned i = 0; i < save_decoded_options_count; ++i) {
    const cl_decoded_option& o = save_decoded_options[i];
    if (o.opt_index == OPT_fplugin_arg_ && o.arg != nullptr &&
        strncmp(o.arg, prefix.c_str(), prefix.size()) == 0)
      found = o.arg + prefix.size();
  }
  return found.empty() ? truncated : found;
}

bool ParseWeights(const OptionSpec& spec, const char* value) {
  const std::string v = value ? value : "";
  if (v.rfind("profile=", 0) == 0 && v.size() > 8) {
    g_options.weights = WeightKind::kProfile;
    g_options.profile_path = RawWeightsProfile(v.substr(8));
    return true;
  }
  const int i = ValueIndex(spec, value);  // heuristic|gcc|uniform|profile=FILE
  if (i < 0 || i > 2) return BadValue(spec, value);
  g_options.weights = i == 0   ? WeightKind::kHeuristic
                      : i == 1 ? WeightKind::kGcc
                               : WeightKind::kUniform;
  return true;
}

bool ParseUpdate(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // single|thread|tls|atomic
  if (i < 0) return BadValue(spec, value);
  g_options.update = i == 0   ? Update::kSingle
                     : i == 1 ? Update::kThread
                     : i == 2 ? Update::kTls
                              : Update::kAtomic;
  return true;
}

bool ParseTableMax(const OptionSpec& spec, const char* value) {
  const std::string v = value ? value : "";
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = v.empty() ? 0 : strtoull(v.c_str(), &end, 10);
  if (v.empty() || errno != 0 || *end != '\0' || v[0] == '-' ||
      n > (1ull << 40)) {
    error("ballarus: %<-fplugin-arg-ballarus-%s%> needs a number of paths "
          "between 0 and 2^40, not %qs",
          spec.key, v.c_str());
    return false;
  }
  g_options.path_table_max = n;
  return true;
}

bool ParseStorage(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // dense|hash
  if (i < 0) return BadValue(spec, value);
  g_options.path_storage_hash = i == 1;
  return true;
}

// Without a value: on; 1 and 0 also mean on and off.
bool ParseEarlyTermination(const OptionSpec& spec, const char* value) {
  const std::string v = value ? value : "on";
  if (v == "on" || v == "1") {
    g_options.early_termination = true;
  } else if (v == "off" || v == "0") {
    g_options.early_termination = false;
  } else {
    return BadValue(spec, value);
  }
  return true;
}

// dump, dump=1: on; dump=0: off.
bool ParseDump(const OptionSpec&, const char* value) {
  g_options.dump = value == nullptr || strcmp(value, "0") != 0;
  return true;
}

bool ParsePathUse(const OptionSpec& spec, const char* value) {
  if (value == nullptr || *value == '\0') {
    error("ballarus: %<-fplugin-arg-ballarus-%s%> needs a profile file",
          spec.key);
    return false;
  }
  // none: the default, no duplication.
  g_options.path_use = strcmp(value, "none") == 0 ? "" : value;
  return true;
}

// cache-key=TEXT: accepted and ignored (see its help).
bool ParseCacheKey(const OptionSpec&, const char*) { return true; }

bool ParsePathRegister(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // pointer|number
  if (i < 0) return BadValue(spec, value);
  g_options.path_pointer = i == 0;
  return true;
}

bool ParsePathLoops(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // profile|on|off
  if (i < 0) return BadValue(spec, value);
  g_options.path_loops = i == 0   ? Options::PathLoops::kProfile
                         : i == 1 ? Options::PathLoops::kOn
                                  : Options::PathLoops::kOff;
  return true;
}

bool ParseEstimator(const OptionSpec& spec, const char* value) {
  const int i = ValueIndex(spec, value);  // ball-larus|wu-larus
  if (i < 0) return BadValue(spec, value);
  g_options.estimator = i == 0 ? Options::Estimator::kBallLarus
                               : Options::Estimator::kWuLarus;
  return true;
}

bool PrintUserHelp(const OptionSpec&, const char*);
bool PrintTuneHelp(const OptionSpec&, const char*);

// The decisions a user makes.
const OptionSpec kUserOptions[] = {
    {"mode", "edge|naive|path|edge,path|trace|trace-naive",
     "what is counted (default path):\n"
     "  edge: optimal edge profiling, counters only on the chords of a\n"
     "    maximum spanning tree of the CFG (Knuth; Ball & Larus 1994);\n"
     "    ballarus-reconstruct derives the other edges exactly\n"
     "  naive: a 64-bit counter on every CFG edge that can hold one\n"
     "  path: Ball-Larus path profiling (MICRO 1996), every acyclic path\n"
     "    of every function counted; the edge profile is derived from\n"
     "    the paths\n"
     "  edge,path: both in one build (ballarus-reconstruct verify checks\n"
     "    one against the other); naive,path likewise\n"
     "  trace: no counts; witnesses on the edges Ball & Larus's tracing\n"
     "    places, written when the program runs with BALLARUS_TRACE=full\n"
     "    or ring:N (into BALLARUS_TRACE_FILE, default ballarus.trace)\n"
     "  trace-naive: as trace, but every block writes its index (the\n"
     "    reference trace the optimal one is checked against)\n",
     ParseMode},
    {"weights", "heuristic|gcc|uniform|profile=FILE",
     "where edge counters go: on the edges these weights call cold\n"
     "  heuristic: the Ball-Larus static estimate (default)\n"
     "  gcc: GCC's own guessed frequencies (heuristic where it has none,\n"
     "    e.g. at -O0)\n"
     "  uniform: every edge alike\n"
     "  profile=FILE: exact counts from an earlier ballarus profile of the\n"
     "    same build (the fewest increments any spanning tree can give)\n",
     ParseWeights},
    {"update", "single|thread|tls|atomic",
     "how a counter is updated:\n"
     "  single: plain increments, fastest, racy under threads\n"
     "  thread: plain increments into per-thread copies of the counters,\n"
     "    added up at thread exit and at every dump: exact under threads\n"
     "    at about the cost of single (default when compiling with\n"
     "    -pthread or -fprofile-update=atomic, else single)\n"
     "  tls: thread, with each thread's counters in static TLS in code for\n"
     "    executables (-fPIC code keeps thread's): thread's cost without\n"
     "    touching %gs, but every thread carries all the executable's\n"
     "    counters out of its stack size and clears them when it is created\n"
     "  atomic: relaxed atomic increments, exact, several times slower\n"
     "    (the default of -pthread and -fprofile-update=atomic in -fPIC code\n"
     "    under -flto, where thread does not work)\n",
     ParseUpdate},
    {"path-table-max", "N",
     "path profiling: a function counts its paths in a dense table of at\n"
     "most N+1 counters (default 4096); one with more paths is cut at cold\n"
     "blocks until it fits (each entry into a cut block ends a path and\n"
     "starts one); 0: every function in the runtime hash table\n",
     ParseTableMax},
    {"path-storage", "dense|hash",
     "path profiling, functions with more than path-table-max paths:\n"
     "  dense: cut until their paths fit the table (default)\n"
     "  hash: every path exact, in a thread-safe runtime hash table (a\n"
     "    runtime call at every path end)\n",
     ParseStorage},
    {"early-termination", "on|off",
     "path profiling: count the paths cut short by exit(), longjmp or an\n"
     "exception at the call that did not return (default on: one counter\n"
     "update before each call that may not return, which\n"
     "ballarus-reconstruct settles; off saves the update and loses those\n"
     "paths)\n",
     ParseEarlyTermination},
    {"dump", nullptr,
     "write the pass dump (<output>.NNNi.ballarus), which explains each\n"
     "function's counter placement (GCC 12 parses -fdump-ipa-* before\n"
     "plugins load, so -fdump-ipa-ballarus itself is refused;\n"
     "-fdump-ipa-all includes ballarus' dump)\n",
     ParseDump},
    {"cache-key", "TEXT",
     "ignored: the object records where its profile goes, so the wrappers\n"
     "pass that place here when a compiler cache (ccache) drives the\n"
     "compile, which then reuses an object only for the same place\n",
     ParseCacheKey},
    {"help", nullptr, "print this text\n", PrintUserHelp},
    {"tune-help", nullptr,
     "list the tuning switches, tune-NAME=VALUE: the mechanisms behind the\n"
     "defaults, kept for measuring\n",
     PrintTuneHelp},
};

// The tuning switches: each default is the mechanism that measured best
// (docs/DESIGN.md, "Tuning switches", gives the figures).
const OptionSpec kTuneOptions[] = {
    {"tune-path-hoist", "on|off",
     "path ends counted on the edges into a returning block (default on)\n",
     ParseOnOff, &Options::path_hoist},
    {"tune-path-returns", "on|off",
     "no pre-count before calls to functions of the TU that always return\n"
     "(default on)\n",
     ParseOnOff, &Options::path_returns},
    {"tune-path-signed", "on|off",
     "a signed numeric path register where the numbers allow (default on)\n",
     ParseOnOff, &Options::path_signed},
    {"tune-path-register", "pointer|number",
     "the path register holds the address of the path's counter (default\n"
     "pointer) or the path number (range-checked counts)\n",
     ParsePathRegister},
    {"tune-path-loops", "profile|on|off",
     "one-path loops counted in locals: where an earlier profile shows 8+\n"
     "iterations per entry (default profile), on static estimates, never\n",
     ParsePathLoops},
    {"tune-path-loop-cuts", "auto|on|off",
     "a one-path loop's entry edges end the path entering it (default\n"
     "auto: mode=path, and edge,path unless tune-path-derive=off)\n",
     ParseAutoOnOff, nullptr, &Options::path_loop_cuts},
    {"tune-path-call-cuts", "auto|on|off",
     "a call that may not return, reached by several path prefixes, has\n"
     "its block cut (default auto: mode=path with early termination)\n",
     ParseAutoOnOff, nullptr, &Options::path_call_cuts},
    {"tune-path-goto-targets", "auto|on|off",
     "computed-goto targets set the path register, not the goto (default\n"
     "auto: unless weights=profile=)\n",
     ParseAutoOnOff, nullptr, &Options::path_goto_targets},
    {"tune-path-from-edges", "auto|on|off",
     "a function whose edge counts determine its paths gets edge counters\n"
     "instead of the path register (default auto: unless tables are\n"
     "hashed)\n",
     ParseAutoOnOff, nullptr, &Options::path_from_edges},
    {"tune-path-derive", "auto|on|off",
     "edge,path: a path count the edge counters give is not made (default\n"
     "auto: on)\n",
     ParseAutoOnOff, nullptr, &Options::path_derive},
    {"tune-path-balance", "on|off",
     "mode=path: one pre-count per loop header or cut block taken from the\n"
     "balance of the paths starting there (default on)\n",
     ParseOnOff, &Options::path_balance},
    {"tune-path-cut-hoist", "on|off",
     "a cut block's path end counted on the edges into it (default on)\n",
     ParseOnOff, &Options::path_cut_hoist},
    {"tune-path-precount-hoist", "on|off",
     "a pre-count several prefixes reach counted on the edges into the\n"
     "call's block (default on)\n",
     ParseOnOff, &Options::path_precount_hoist},
    {"tune-path-entry-balance", "on|off",
     "mode=path: a static function's entry pre-count taken from the\n"
     "balance of its calls (default on)\n",
     ParseOnOff, &Options::path_entry_balance},
    {"tune-entry-calls", "on|off",
     "edge mode: a static function's entry count taken from its callers'\n"
     "call blocks, without a counter (default on)\n",
     ParseOnOff, &Options::entry_calls},
    {"tune-path-keep-tails", "on|off",
     "no cross-jumping in a function whose path ends were hoisted onto the\n"
     "edges into a computed goto or cut block (default on)\n",
     ParseOnOff, &Options::path_keep_tails},
    {"tune-thread-gs", "on|off",
     "update=thread in x86-64 code for executables: a count is one add\n"
     "through %gs, whose base each thread sets to its copy's distance from\n"
     "the shared counters (default on: off counts through the thread-local\n"
     "pointer, as -fPIC code does)\n",
     ParseOnOff, &Options::thread_gs},
    {"tune-inline-sizes", "on|off",
     "GCC's inliner sizes a function without its counter updates, so it\n"
     "inlines what the plain build inlines (default on)\n",
     ParseOnOff, &Options::inline_sizes},
    {"tune-loop-barrier", "on|off",
     "an empty asm after a counter update in a loop that may touch counter\n"
     "memory, so GCC's PRE cannot keep the counter in a register (default\n"
     "on)\n",
     ParseOnOff, &Options::loop_barrier},
    {"tune-loop-registers", "auto|on|off",
     "counted call-free loops count in locals, added to the counters on\n"
     "their exits (default auto: at -O1+ with update=single, or with\n"
     "update=thread counting through %gs, every such loop with path\n"
     "profiling, tight loops of 12 statements or fewer in edge mode)\n",
     ParseAutoOnOff, nullptr, &Options::loop_registers},
    {"tune-estimator", "ball-larus|wu-larus",
     "the static estimate behind weights=heuristic (default ball-larus):\n"
     "  ball-larus: Ball-Larus' loop-based weighting\n"
     "  wu-larus: Wu-Larus' branch heuristics combined by Dempster-Shafer\n",
     ParseEstimator},
    {"tune-path-use", "FILE|none",
     "with -fprofile-use: instrument nothing; copy the hot path chains\n"
     "whose branches FILE's path profile (mode=path or edge,path) shows\n"
     "correlated, each copy with its exact counts (default none: measured\n"
     "without gain, docs/path-guided.md)\n",
     ParsePathUse},
};

// "  KEY=VALUES" and the option's help lines, indented.
void AppendHelp(const OptionSpec& spec, std::string* out) {
  out->append("  ").append(spec.key);
  if (spec.values) out->append("=").append(spec.values);
  out->append("\n");
  for (const char* p = spec.help; *p != '\0';) {
    const char* nl = strchr(p, '\n');
    const size_t len = nl ? size_t(nl - p) : strlen(p);
    out->append("      ").append(p, len).append("\n");
    p += len + (nl ? 1 : 0);
  }
}

template <size_t N>
std::string MakeHelp(const char* intro, const OptionSpec (&table)[N]) {
  std::string text = intro;
  for (const OptionSpec& spec : table) AppendHelp(spec, &text);
  return text;
}

const std::string& UserHelp() {
  static const std::string text = MakeHelp(
      "ballarus: exact edge and path profiles inside GCC (Knuth; Ball &\n"
      "Larus).  Options, -fplugin-arg-ballarus-KEY=VALUE (when a key is\n"
      "given several times, the last one wins):\n",
      kUserOptions);
  return text;
}

bool PrintUserHelp(const OptionSpec&, const char*) {
  fputs(UserHelp().c_str(), stderr);
  return true;
}

bool PrintTuneHelp(const OptionSpec&, const char*) {
  static const std::string text = MakeHelp(
      "ballarus tuning switches, -fplugin-arg-ballarus-tune-NAME=VALUE: the\n"
      "mechanisms behind the defaults, kept so that the benchmarks can\n"
      "compare them.  Every default is the mechanism that measured best\n"
      "(docs/DESIGN.md, \"Tuning switches\").\n",
      kTuneOptions);
  fputs(text.c_str(), stderr);
  return true;
}

template <size_t N>
const OptionSpec* Find(const OptionSpec (&table)[N], const std::string& key) {
  for (const OptionSpec& spec : table)
    if (key == spec.key) return &spec;
  return nullptr;
}

// An unknown key: the error names it; a tuning switch's name given without
// tune- is told the tune- spelling.
void ReportUnknown(const std::string& key) {
  if (Find(kTuneOptions, "tune-" + key) != nullptr) {
    error("ballarus: unknown option %<-fplugin-arg-ballarus-%s%>; the "
          "tuning switch is %<-fplugin-arg-ballarus-tune-%s%> "
          "(-fplugin-arg-ballarus-tune-help lists the tuning switches)",
          key.c_str(), key.c_str());
    return;
  }
  error("ballarus: unknown option %<-fplugin-arg-ballarus-%s%>; "
        "-fplugin-arg-ballarus-help lists the options",
        key.c_str());
}

}  // namespace

const char* const kHelp = UserHelp().c_str();

bool ParseOptions(const plugin_name_args* info) {
  bool ok = true;
  for (int i = 0; i < info->argc; ++i) {
    const std::string key = info->argv[i].key;
    const OptionSpec* spec = Find(kUserOptions, key);
    if (spec == nullptr) spec = Find(kTuneOptions, key);
    if (spec == nullptr) {
      ReportUnknown(key);
      ok = false;
      continue;
    }
    ok &= spec->parse(*spec, info->argv[i].value);
  }
  return ok;
}

}  // namespace ballarus::plugin
