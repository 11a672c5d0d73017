//===- WorkerOptionsTest.cpp - The worker's command line ------------------===//

#include "tra/Engine/MpiJob.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

using namespace tra;
using namespace tra::engine;

namespace {
rt::Result<WorkerOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "tra-llama-worker");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return WorkerOptions::parse(int(argv.size()), argv.data());
}
} // namespace

TEST(WorkerOptions, RoundTrip) {
  WorkerOptions o;
  o.checkpoint = "/models/a.bin";
  o.programs = {"/cache/forward-dist-1.so", "/cache/forward-dist-7.so"};
  o.maxSeqLen = 256;
  o.threads = 3;
  o.stepTimeout = 2.5;
  o.tokenizer = "/models/tok.bin";
  GenerationConfig &g = o.generation;
  g.prompt = {1, 403, 7};
  g.steps = 64;
  g.temperature = 0.1 + 0.2; // not a short decimal: must read back exactly
  g.topP = 0.9;
  g.seed = 18446744073709551615ull;
  g.printIds = true;
  g.warmup = true;
  g.logitsOut = "/tmp/l.npy";
  g.benchJson = "/tmp/b.json";
  g.compileSeconds = 1.0 / 3.0;
  g.compiledNow = true;
  rt::Result<WorkerOptions> back = parse(o.toArguments());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->checkpoint, o.checkpoint);
  EXPECT_EQ(back->programs, o.programs);
  EXPECT_EQ(back->maxSeqLen, 256);
  EXPECT_EQ(back->threads, 3);
  EXPECT_EQ(back->stepTimeout, 2.5);
  EXPECT_EQ(back->tokenizer, o.tokenizer);
  const GenerationConfig &h = back->generation;
  EXPECT_EQ(h.prompt, g.prompt);
  EXPECT_EQ(h.steps, 64);
  EXPECT_EQ(h.temperature, g.temperature);
  EXPECT_EQ(h.topP, g.topP);
  EXPECT_EQ(h.seed, g.seed);
  EXPECT_TRUE(h.printIds);
  EXPECT_TRUE(h.warmup);
  EXPECT_TRUE(h.compiledNow);
  EXPECT_EQ(h.logitsOut, g.logitsOut);
  EXPECT_EQ(h.benchJson, g.benchJson);
  EXPECT_EQ(h.compileSeconds, g.compileSeconds);
}

TEST(WorkerOptions, RelativePathsBecomeAbsolute) {
  WorkerOptions o;
  o.checkpoint = "model.bin";
  o.programs = {"./p.so"};
  o.generation.prompt = {1};
  o.generation.steps = 1;
  o.generation.logitsOut = "out/l.npy";
  rt::Result<WorkerOptions> back = parse(o.toArguments());
  ASSERT_TRUE(back.ok()) << back.message();
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  std::string dir = cwd;
  if (dir != "/")
    dir += "/";
  EXPECT_EQ(back->checkpoint, dir + "model.bin");
  EXPECT_EQ(back->programs[0], dir + "p.so");
  EXPECT_EQ(back->generation.logitsOut, dir + "out/l.npy");
}

TEST(WorkerOptions, Errors) {
  std::vector<std::string> base = {"--checkpoint", "m", "--program", "p",
                                   "--prompt-ids", "1", "--steps",   "2"};
  ASSERT_TRUE(parse(base).ok());
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return parse(args);
  };
  struct Case {
    std::vector<std::string> args;
    const char *message;
  } cases[] = {
      {{"--frobnicate", "1"}, "unknown option '--frobnicate'"},
      {{"--threads"}, "--threads needs a value"},
      {{"--threads", "-2"}, "expected a number >= 0"},
      {{"--steps", "12x"}, "expected a number >= 0"},
      {{"--steps", "99999999999999999999999"}, "expected a number >= 0"},
      {{"--seed", "-1"}, "expected a number >= 0"},
      {{"--seed", "18446744073709551616"}, "expected a number >= 0"},
      {{"--top-p", "high"}, "expected a number"},
      {{"--step-timeout", "-1"}, "expected a number"},
      {{"--prompt-ids", "1,,2"}, "not token ids"},
      {{"--prompt-ids", "1,-2"}, "not token ids"},
      {{"--prompt-ids", "1,2,3"}, "at least the prompt's length"},
  };
  for (const Case &c : cases) {
    rt::Result<WorkerOptions> parsed = with(c.args);
    ASSERT_FALSE(parsed.ok()) << c.args[0];
    EXPECT_NE(parsed.message().find(c.message), std::string::npos)
        << parsed.message();
  }
  EXPECT_FALSE(
      parse({"--program", "p", "--prompt-ids", "1", "--steps", "2"}).ok());
}

TEST(MpiJob, Command) {
  MpiJob job;
  job.mpirun = "/usr/bin/mpirun";
  job.worker = "/opt/tra/bin/tra-llama-worker";
  job.ranks = 8;
  job.mpirunArgs = {"--mca", "btl", "self,tcp"};
  WorkerOptions o;
  o.checkpoint = "/m.bin";
  o.programs = {"/p.so"};
  o.generation.prompt = {1};
  o.generation.steps = 4;
  std::vector<std::string> argv = mpirunCommand(job, o);
  ASSERT_GE(argv.size(), 8u);
  EXPECT_EQ(argv[0], "/usr/bin/mpirun");
  auto at = [&](const std::string &arg) {
    return std::find(argv.begin(), argv.end(), arg) - argv.begin();
  };
  EXPECT_LT(size_t(at("--oversubscribe")), argv.size());
  EXPECT_EQ(argv[size_t(at("-np")) + 1], "8");
  EXPECT_EQ(argv[size_t(at("-np")) + 2], job.worker);
  EXPECT_LT(at("self,tcp"), at("-np"));
  job.hostfile = "/etc/hosts.mpi";
  argv = mpirunCommand(job, o);
  EXPECT_EQ(size_t(at("--oversubscribe")), argv.size());
  EXPECT_EQ(argv[size_t(at("--hostfile")) + 1], "/etc/hosts.mpi");
}

TEST(MpiJob, FailedJobNamesExitCode) {
  rt::Result<std::string> sh = findOnPath("false");
  ASSERT_TRUE(sh.ok()) << sh.message();
  MpiJob job;
  job.mpirun = *sh; // exits 1 whatever it is given
  job.worker = "w";
  job.ranks = 2;
  WorkerOptions o;
  o.checkpoint = "m";
  o.programs = {"p"};
  o.generation.prompt = {1};
  o.generation.steps = 1;
  rt::Status status = runWorkerJob(job, o);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "the MPI job of 2 ranks failed (mpirun exit code 1)");
  EXPECT_FALSE(findOnPath("no-such-program-tra-test").ok());
}

namespace {
rt::Result<TrainWorkerOptions> parseTrain(std::vector<std::string> args) {
  args.insert(args.begin(), "tra-llama-train-worker");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return TrainWorkerOptions::parse(int(argv.size()), argv.data());
}
} // namespace

TEST(TrainWorkerOptions, RoundTrip) {
  TrainWorkerOptions o;
  o.program = "/cache/train-dist-3.so";
  o.weights = "/scratch/start/model.bin";
  o.states = "/scratch/start/optimizer.safetensors";
  o.data = "/scratch/tokens.npy";
  o.output = "/runs/a";
  o.optimizer = "adamw";
  o.stepsDone = 10;
  o.steps = 90;
  o.saveEvery = 25;
  o.threads = 2;
  o.peakLr = 0.1 + 0.2; // must read back exactly
  o.minLr = 1.0 / 3.0;
  o.warmup = 7;
  o.stepTimeout = 30;
  rt::Result<TrainWorkerOptions> back = parseTrain(o.toArguments());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->program, o.program);
  EXPECT_EQ(back->weights, o.weights);
  EXPECT_EQ(back->states, o.states);
  EXPECT_EQ(back->data, o.data);
  EXPECT_EQ(back->output, o.output);
  EXPECT_EQ(back->optimizer, "adamw");
  EXPECT_EQ(back->stepsDone, 10);
  EXPECT_EQ(back->steps, 90);
  EXPECT_EQ(back->saveEvery, 25);
  EXPECT_EQ(back->threads, 2);
  EXPECT_EQ(back->peakLr, o.peakLr);
  EXPECT_EQ(back->minLr, o.minLr);
  EXPECT_EQ(back->warmup, 7);
  EXPECT_EQ(back->stepTimeout, 30);
  // No states: none passed, none read back.
  o.states.clear();
  back = parseTrain(o.toArguments());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->states, "");
}

TEST(TrainWorkerOptions, BadArgumentsAreNamed) {
  EXPECT_EQ(parseTrain({"--steps"}).message(), "--steps needs a value");
  EXPECT_EQ(parseTrain({"--steps", "-3"}).message(),
            "--steps -3: expected a number >= 0");
  EXPECT_EQ(parseTrain({"--lr", "abc"}).message(),
            "--lr abc: expected a number >= 0");
  EXPECT_EQ(parseTrain({"--lr", "nan"}).message(),
            "--lr nan: expected a number >= 0");
  EXPECT_EQ(parseTrain({"--frobnicate", "1"}).message(),
            "unknown option '--frobnicate'");
  EXPECT_EQ(parseTrain({"--program", "p"}).message(),
            "needs --program, --weights, --data, --output and --steps (at "
            "least 1)");
}
