//===- MpiJob.h - A distributed run as one MPI job --------------*- C++ -*-===//
//
// On hardware with several devices a generation runs as ONE MPI job:
// `mpirun -np N tra-llama-worker ...`, each rank a RankModel (RankModel.h);
// so does a training run (`tra-llama-train-worker`, each rank a
// RankTrainer). WorkerOptions and TrainWorkerOptions are the workers'
// command lines, written by the launching process and read by the worker
// (parse), defined once here so the two sides cannot disagree. No MLIR
// dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TRA_ENGINE_MPIJOB_H
#define TRA_ENGINE_MPIJOB_H

#include "tra/Engine/Generate.h"
#include "tra/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tra::engine {

/// What every rank of the job is told.
struct WorkerOptions {
  /// The checkpoint each rank reads its tiles from.
  std::string checkpoint;
  /// The step programs (shared libraries of every rank's program).
  std::vector<std::string> programs;
  /// The KV-cache length the programs were built for (0: the model's).
  int64_t maxSeqLen = 0;
  /// Threads per rank (0: the programs' default).
  int64_t threads = 0;
  /// End the job when no step starts for this long (seconds; 0: never).
  double stepTimeout = 0.0;
  /// The tokenizer rank 0 prints text with ("" for none).
  std::string tokenizer;
  /// What to generate: prompt, steps, sampling, printIds, warmup,
  /// logitsOut, benchJson, compileSeconds and compiledNow are passed on; the
  /// rest is the worker's to fill.
  GenerationConfig generation;

  /// The command-line arguments (without the program name).
  std::vector<std::string> toArguments() const;
  /// Parses the arguments written by toArguments (argv[0] is skipped).
  static rt::Result<WorkerOptions> parse(int argc, char **argv);
};

/// What every rank of a training job (tra-llama-train-worker, one
/// RankTrainer per rank, RankTrainer.h) is told.
struct TrainWorkerOptions {
  /// The training step (a shared library of every rank's program).
  std::string program;
  /// The starting weights (a checkpoint stating the LLaMA parameters) and
  /// optimizer states (a safetensors file; "": all zeros).
  std::string weights, states;
  /// The token ids to train on (a 1-D int64 .npy file).
  std::string data;
  /// The directory rank 0 writes the checkpoints into, and the optimizer's
  /// name recorded in them.
  std::string output, optimizer;
  /// Steps taken before, steps to take, a checkpoint every saveEvery steps
  /// (0: only after the last), threads per rank (0: the program's).
  int64_t stepsDone = 0, steps = 0, saveEvery = 0, threads = 0;
  /// The learning-rate schedule (its total is stepsDone + steps).
  double peakLr = 0, minLr = 0;
  int64_t warmup = 0;
  /// End the job when no step starts for this long (seconds; 0: never).
  double stepTimeout = 0.0;

  std::vector<std::string> toArguments() const;
  static rt::Result<TrainWorkerOptions> parse(int argc, char **argv);
};

/// How to start the job.
struct MpiJob {
  /// mpirun (findOnPath("mpirun")) and the worker executable.
  std::string mpirun, worker;
  int64_t ranks = 0;
  /// mpirun's --hostfile ("": every rank on this machine, oversubscribed
  /// when there are more ranks than cores) and extra mpirun arguments.
  std::string hostfile;
  std::vector<std::string> mpirunArgs;
};

/// This process's rank as mpirun tells it (before MPI is initialized; 0
/// outside a job).
int launcherRank();

/// A failure before MPI starts (bad options, a damaged library), the same on
/// every rank of a launched job: rank 0 prints "`tool`: error: `message`";
/// the other ranks wait (at most a few seconds) for the launcher to end the
/// job when rank 0 exits, so that they do not end it first and cut off
/// rank 0's line. Returns the exit status, 1.
int reportEarlyFailure(const char *tool, const std::string &message);

/// The full path of the executable `name` on $PATH, if there is one.
rt::Result<std::string> findOnPath(const std::string &name);

/// `path` made absolute against the current directory (the ranks may start
/// elsewhere); "" stays "".
std::string absolutePath(const std::string &path);

/// The mpirun command line (argv, mpirun first) of `job` running the worker
/// with the arguments `workerArguments` (every path in them absolute).
std::vector<std::string>
mpirunCommand(const MpiJob &job,
              const std::vector<std::string> &workerArguments);
std::vector<std::string> mpirunCommand(const MpiJob &job,
                                       const WorkerOptions &options);

/// Runs the job and waits for it; fails, naming the exit code, when mpirun
/// does not exit 0 (a rank failed: the ranks print why).
rt::Status runMpiJob(const MpiJob &job,
                     const std::vector<std::string> &workerArguments);
rt::Status runWorkerJob(const MpiJob &job, const WorkerOptions &options);

} // namespace tra::engine

#endif // TRA_ENGINE_MPIJOB_H
