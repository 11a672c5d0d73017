//===- MpiJob.cpp - A distributed run as one MPI job ----------------------===//

#include "tra/Engine/MpiJob.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace tra;
using namespace tra::engine;

namespace {
/// A double that reads back exactly.
std::string exactNumber(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

std::optional<long long> parseInteger(const std::string &value) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end || errno == ERANGE)
    return std::nullopt;
  return v;
}

std::optional<double> parseNumber(const std::string &value) {
  char *end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end)
    return std::nullopt;
  return v;
}
} // namespace

std::vector<std::string> WorkerOptions::toArguments() const {
  const GenerationConfig &g = generation;
  std::string prompt;
  for (int64_t id : g.prompt)
    prompt += (prompt.empty() ? "" : ",") + std::to_string(id);
  std::vector<std::string> args = {"--checkpoint", absolutePath(checkpoint)};
  for (const std::string &path : programs)
    args.insert(args.end(), {"--program", absolutePath(path)});
  args.insert(args.end(),
              {"--prompt-ids", prompt, "--steps", std::to_string(g.steps),
               "--max-seq-len", std::to_string(maxSeqLen), "--threads",
               std::to_string(threads), "--temperature",
               exactNumber(g.temperature), "--top-p", exactNumber(g.topP),
               "--seed", std::to_string(g.seed), "--compile-seconds",
               exactNumber(g.compileSeconds)});
  if (g.compiledNow)
    args.push_back("--compiled-now");
  if (g.printIds)
    args.push_back("--print-ids");
  if (g.warmup)
    args.push_back("--warmup");
  if (stepTimeout > 0)
    args.insert(args.end(), {"--step-timeout", exactNumber(stepTimeout)});
  for (auto [flag, value] : {std::pair{"--tokenizer", tokenizer},
                             std::pair{"--logits-out", g.logitsOut},
                             std::pair{"--bench-json", g.benchJson}})
    if (!value.empty())
      args.insert(args.end(), {flag, absolutePath(value)});
  return args;
}

rt::Result<WorkerOptions> WorkerOptions::parse(int argc, char **argv) {
  WorkerOptions o;
  GenerationConfig &g = o.generation;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--print-ids" || flag == "--compiled-now" ||
        flag == "--warmup") {
      (flag == "--print-ids"      ? g.printIds
       : flag == "--compiled-now" ? g.compiledNow
                                  : g.warmup) = true;
      continue;
    }
    if (i + 1 >= argc)
      return rt::Error{flag + " needs a value"};
    std::string value = argv[++i];
    if (flag == "--checkpoint") {
      o.checkpoint = value;
    } else if (flag == "--program") {
      o.programs.push_back(value);
    } else if (flag == "--tokenizer") {
      o.tokenizer = value;
    } else if (flag == "--logits-out") {
      g.logitsOut = value;
    } else if (flag == "--bench-json") {
      g.benchJson = value;
    } else if (flag == "--prompt-ids") {
      for (size_t start = 0; start <= value.size();) {
        size_t comma = std::min(value.find(',', start), value.size());
        std::optional<long long> id =
            parseInteger(value.substr(start, comma - start));
        if (!id || *id < 0)
          return rt::Error{"--prompt-ids " + value + ": not token ids"};
        g.prompt.push_back(*id);
        start = comma + 1;
      }
    } else if (flag == "--seed") {
      char *end = nullptr;
      errno = 0;
      unsigned long long v = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || value[0] == '-' || *end || errno == ERANGE)
        return rt::Error{flag + " " + value + ": expected a number >= 0"};
      g.seed = uint64_t(v);
    } else if (flag == "--steps" || flag == "--max-seq-len" ||
               flag == "--threads") {
      std::optional<long long> v = parseInteger(value);
      if (!v || *v < 0)
        return rt::Error{flag + " " + value + ": expected a number >= 0"};
      (flag == "--steps"         ? g.steps
       : flag == "--max-seq-len" ? o.maxSeqLen
                                 : o.threads) = *v;
    } else if (flag == "--temperature" || flag == "--top-p" ||
               flag == "--compile-seconds" || flag == "--step-timeout") {
      std::optional<double> v = parseNumber(value);
      if (!v || (flag == "--step-timeout" && *v < 0))
        return rt::Error{flag + " " + value + ": expected a number"};
      (flag == "--temperature"    ? g.temperature
       : flag == "--top-p"        ? g.topP
       : flag == "--step-timeout" ? o.stepTimeout
                                  : g.compileSeconds) = *v;
    } else {
      return rt::Error{"unknown option '" + flag + "'"};
    }
  }
  if (o.checkpoint.empty() || o.programs.empty() || g.prompt.empty() ||
      g.steps < int64_t(g.prompt.size()))
    return rt::Error{"needs --checkpoint, --program, --prompt-ids and "
                     "--steps (at least the prompt's length)"};
  return o;
}

std::vector<std::string> TrainWorkerOptions::toArguments() const {
  std::vector<std::string> args = {"--program",    absolutePath(program),
                                   "--weights",    absolutePath(weights),
                                   "--data",       absolutePath(data),
                                   "--output",     absolutePath(output),
                                   "--optimizer",  optimizer,
                                   "--steps-done", std::to_string(stepsDone),
                                   "--steps",      std::to_string(steps),
                                   "--save-every", std::to_string(saveEvery),
                                   "--threads",    std::to_string(threads),
                                   "--lr",         exactNumber(peakLr),
                                   "--min-lr",     exactNumber(minLr),
                                   "--warmup",     std::to_string(warmup)};
  if (!states.empty())
    args.insert(args.end(), {"--states", absolutePath(states)});
  if (stepTimeout > 0)
    args.insert(args.end(), {"--step-timeout", exactNumber(stepTimeout)});
  return args;
}

rt::Result<TrainWorkerOptions> TrainWorkerOptions::parse(int argc,
                                                         char **argv) {
  TrainWorkerOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc)
      return rt::Error{flag + " needs a value"};
    std::string value = argv[++i];
    std::string *text = flag == "--program"     ? &o.program
                        : flag == "--weights"   ? &o.weights
                        : flag == "--states"    ? &o.states
                        : flag == "--data"      ? &o.data
                        : flag == "--output"    ? &o.output
                        : flag == "--optimizer" ? &o.optimizer
                                                : nullptr;
    int64_t *count = flag == "--steps-done"   ? &o.stepsDone
                     : flag == "--steps"      ? &o.steps
                     : flag == "--save-every" ? &o.saveEvery
                     : flag == "--threads"    ? &o.threads
                     : flag == "--warmup"     ? &o.warmup
                                              : nullptr;
    double *number = flag == "--lr"             ? &o.peakLr
                     : flag == "--min-lr"       ? &o.minLr
                     : flag == "--step-timeout" ? &o.stepTimeout
                                                : nullptr;
    if (text) {
      *text = value;
    } else if (count) {
      std::optional<long long> v = parseInteger(value);
      if (!v || *v < 0)
        return rt::Error{flag + " " + value + ": expected a number >= 0"};
      *count = *v;
    } else if (number) {
      std::optional<double> v = parseNumber(value);
      if (!v || !(*v >= 0))
        return rt::Error{flag + " " + value + ": expected a number >= 0"};
      *number = *v;
    } else {
      return rt::Error{"unknown option '" + flag + "'"};
    }
  }
  if (o.program.empty() || o.weights.empty() || o.data.empty() ||
      o.output.empty() || o.steps < 1)
    return rt::Error{"needs --program, --weights, --data, --output and "
                     "--steps (at least 1)"};
  return o;
}

int tra::engine::launcherRank() {
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank ? std::atoi(rank) : 0;
}

int tra::engine::reportEarlyFailure(const char *tool,
                                    const std::string &message) {
  if (launcherRank() == 0) {
    std::fprintf(stderr, "%s: error: %s\n", tool, message.c_str());
    std::fflush(stderr);
    return 1;
  }
  // mpirun aborts the job at the first non-zero exit; leaving before rank 0
  // has written its line could lose it. Rank 0's exit ends this wait.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  return 1;
}

rt::Result<std::string> tra::engine::findOnPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t colon = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, colon - start);
    start = colon + 1;
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return rt::Error{name + " is not on PATH"};
}

std::string tra::engine::absolutePath(const std::string &path) {
  if (path.empty() || path[0] == '/')
    return path;
  std::vector<char> cwd(4096);
  while (!getcwd(cwd.data(), cwd.size())) {
    if (errno != ERANGE)
      return path;
    cwd.resize(cwd.size() * 2);
  }
  std::string dir = cwd.data();
  std::string rest = path;
  while (rest.rfind("./", 0) == 0)
    rest = rest.substr(2);
  return dir + (dir.size() > 1 ? "/" : "") + rest;
}

std::vector<std::string>
tra::engine::mpirunCommand(const MpiJob &job,
                           const std::vector<std::string> &workerArguments) {
  std::vector<std::string> args = {job.mpirun};
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  if (job.hostfile.empty())
    args.push_back("--oversubscribe");
  else
    args.insert(args.end(), {"--hostfile", absolutePath(job.hostfile)});
  args.insert(args.end(), job.mpirunArgs.begin(), job.mpirunArgs.end());
  args.insert(args.end(),
              {"-np", std::to_string(job.ranks), absolutePath(job.worker)});
  args.insert(args.end(), workerArguments.begin(), workerArguments.end());
  return args;
}

std::vector<std::string>
tra::engine::mpirunCommand(const MpiJob &job, const WorkerOptions &options) {
  return mpirunCommand(job, options.toArguments());
}

rt::Status tra::engine::runWorkerJob(const MpiJob &job,
                                     const WorkerOptions &options) {
  return runMpiJob(job, options.toArguments());
}

rt::Status
tra::engine::runMpiJob(const MpiJob &job,
                       const std::vector<std::string> &workerArguments) {
  std::vector<std::string> args = mpirunCommand(job, workerArguments);
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::string what = "the MPI job of " + std::to_string(job.ranks) + " ranks";
  // What this process printed must come before what the ranks print.
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (int e = posix_spawn(&pid, job.mpirun.c_str(), nullptr, nullptr,
                          argv.data(), environ))
    return rt::Error{what +
                     " did not start: " + rt::systemError(job.mpirun, e)};
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return rt::Error{what + ": " +
                       rt::systemError("cannot wait for mpirun", errno)};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return rt::Status::success();
  if (WIFSIGNALED(status))
    return rt::Error{what + " failed (mpirun was killed by signal " +
                     std::to_string(WTERMSIG(status)) + ")"};
  return rt::Error{what + " failed (mpirun exit code " +
                   std::to_string(WEXITSTATUS(status)) + ")"};
}
