#include "measure/rounds.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/result.h"
#include "core/stats.h"
#include "measure/round_order.h"

namespace gemmprof::measure {
namespace {

// A visit lasts about this long (samples of one unit back to back), so a round value is
// a median of several launches for small GEMMs and one launch for large ones.
constexpr double kVisitMs = 1.0;
constexpr int32_t kMaxSamplesPerVisit = 64;
// Back to back: enough GEMMs per launch that it lasts ~2 ms, 2..10 of them.
constexpr double kB2bLaunchMs = 2.0;
constexpr int32_t kMinAutoB2b = 2, kMaxAutoB2b = 10;
constexpr int32_t kPilotSamples = 3;
// Where a group's shortest GEMM takes this long or more, back to back differs from
// isolated by little more than the launch ramp, and its N-GEMM launch is the costliest
// unit of a round: noise-aware rounds then time it every second round.
constexpr double kThinB2bFromMs = 1.0;
// Noise-aware rounds are checked against the stop rule about this often, so a group that
// reached its precision does not run on for long.
constexpr double kStopCheckMs = 100.0;

int32_t SamplesFor(double ms_per_sample, bool fixed) {
  if (fixed || ms_per_sample <= 0) return 1;
  return static_cast<int32_t>(
      std::clamp<double>(std::round(kVisitMs / ms_per_sample), 1, kMaxSamplesPerVisit));
}

double Median(std::vector<double> v) {
  return core::SampleStats::FromSamples(std::move(v)).median_ms;
}

// The series one form (the member's own GEMM or a contender) gathers.
struct FormSeries {
  std::vector<double> iso_rounds, iso_samples, b2b_rounds;
};

// A unit of the rounds: what to visit, how often, where its values go.
struct PlannedUnit {
  Visit visit;
  int32_t every = 1;                       // visited in rounds r with r % every == 0
  std::vector<double>* series = nullptr;   // one value per visit: its samples' median
  std::vector<double>* samples = nullptr;  // every sample as well (isolated units)
};

class RoundsRun {
 public:
  RoundsRun(const std::vector<MemberSpec>& members, const RoundsOptions& options, Timer& timer,
            const Clock& clock)
      : members_(members),
        options_(options),
        timer_(timer),
        clock_(clock),
        fixed_(options.stop.fixed_rounds > 0) {}

  absl::StatusOr<RoundsResult> Run() {
    NumberGroups();
    RETURN_IF_ERROR(WarmUp());
    RETURN_IF_ERROR(Pilot());
    RETURN_IF_ERROR(SizeBackToBack());
    PlanUnits();
    RETURN_IF_ERROR(TimeRounds());
    return Finish();
  }

 private:
  size_t Forms(size_t member) const { return std::max<size_t>(1, members_[member].forms.size()); }

  // Groups numbered 0.. in order of their first member.
  void NumberGroups() {
    std::vector<size_t> seen;
    for (const MemberSpec& m : members_) {
      auto it = std::find(seen.begin(), seen.end(), m.group);
      group_of_.push_back(static_cast<size_t>(it - seen.begin()));
      if (it == seen.end()) seen.push_back(m.group);
    }
    groups_ = seen.size();
    forms_.resize(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) forms_[i].resize(Forms(i));
    quant_rounds_.resize(members_.size());
  }

  absl::Status WarmUp() {
    for (size_t i = 0; i < members_.size(); ++i) {
      for (size_t f = 0; f < Forms(i); ++f) {
        RETURN_IF_ERROR(timer_.WarmUp({{i, UnitKind::kIsolated, f}}, options_.warmup_launches));
      }
      if (members_[i].quantization) {
        RETURN_IF_ERROR(
            timer_.WarmUp({{i, UnitKind::kQuantization, 0}}, options_.quant_warmup_launches));
      }
    }
    return absl::OkStatus();
  }

  // Discarded samples that size the visits and the back-to-back launches: ms per launch
  // of every member's isolated and quantization units.
  absl::Status Pilot() {
    t_iso_.assign(members_.size(), 0);
    t_quant_.assign(members_.size(), 0);
    if (!options_.pilot) return absl::OkStatus();
    std::vector<Visit> pilot;
    for (size_t i = 0; i < members_.size(); ++i) {
      pilot.push_back({{i, UnitKind::kIsolated, 0}, kPilotSamples});
      if (members_[i].quantization)
        pilot.push_back({{i, UnitKind::kQuantization, 0}, kPilotSamples});
    }
    ASSIGN_OR_RETURN(std::vector<std::vector<double>> ms, TimeVisits(pilot));
    for (size_t i = 0, v = 0; i < members_.size(); ++i) {
      t_iso_[i] = Median(ms[v++]);
      if (members_[i].quantization) t_quant_[i] = Median(ms[v++]);
    }
    return absl::OkStatus();
  }

  // Back to back is sized per group, from its shortest GEMM, so the members a report
  // compares share N and their series stay paired.
  absl::Status SizeBackToBack() {
    std::vector<double> t_min(groups_, -1);
    for (size_t i = 0; i < members_.size(); ++i) {
      double& t = t_min[group_of_[i]];
      t = t < 0 ? t_iso_[i] : std::min(t, t_iso_[i]);
    }
    b2b_count_.resize(members_.size());
    b2b_every_.resize(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      const double t = t_min[group_of_[i]];
      int32_t n = kMinAutoB2b;
      if (options_.b2b_count > 0) {
        n = options_.b2b_count;
      } else if (options_.pilot) {
        n = static_cast<int32_t>(std::clamp<double>(std::round(kB2bLaunchMs / std::max(t, 1e-6)),
                                                    kMinAutoB2b, kMaxAutoB2b));
      }
      b2b_count_[i] = n;
      b2b_every_[i] = options_.pilot && !fixed_ && t >= kThinB2bFromMs ? 2 : 1;
      RETURN_IF_ERROR(timer_.PrepareBackToBack(i, n));
    }
    return absl::OkStatus();
  }

  // Per member: isolated, back to back, quantization, then each contender's isolated and
  // back to back. A contender's units are sized from the member's pilot (the forms are
  // close to each other) and do not gate the stop rule.
  void PlanUnits() {
    for (size_t i = 0; i < members_.size(); ++i) {
      const int32_t n = b2b_count_[i];
      const int32_t iso_samples = SamplesFor(t_iso_[i], fixed_);
      const int32_t b2b_samples = SamplesFor(n * t_iso_[i], fixed_);
      for (size_t f = 0; f < Forms(i); ++f) {
        FormSeries& s = forms_[i][f];
        units_.push_back({{{i, UnitKind::kIsolated, f}, iso_samples, 1, true},
                          1,
                          &s.iso_rounds,
                          &s.iso_samples});
        units_.push_back(
            {{{i, UnitKind::kBackToBack, f}, b2b_samples, n, true}, b2b_every_[i], &s.b2b_rounds});
        if (f == 0 && members_[i].quantization) {
          units_.push_back(
              {{{i, UnitKind::kQuantization, 0}, SamplesFor(t_quant_[i], fixed_), 1, true},
               1,
               &quant_rounds_[i]});
        }
      }
    }
  }

  // Rounds per TimeVisits call: what the timer can take, and for noise-aware rounds no
  // more than about kStopCheckMs of work between two looks at the stop rule.
  int32_t RoundsPerCall() const {
    std::vector<Visit> round;
    for (const PlannedUnit& u : units_) round.push_back(u.visit);
    int32_t per_call = std::max(1, timer_.MaxRoundsPerCall(round));
    double round_ms = 0;  // a round's work, estimated from the pilot
    for (size_t i = 0; i < members_.size(); ++i) {
      const int32_t n = b2b_count_[i];
      round_ms += static_cast<double>(Forms(i)) *
                      (SamplesFor(t_iso_[i], fixed_) * t_iso_[i] +
                       SamplesFor(n * t_iso_[i], fixed_) * n * t_iso_[i] / b2b_every_[i]) +
                  SamplesFor(t_quant_[i], fixed_) * t_quant_[i];
    }
    if (!fixed_ && round_ms > 0) {
      per_call = std::clamp(static_cast<int32_t>(std::ceil(kStopCheckMs / round_ms)), 1, per_call);
    }
    return per_call;
  }

  absl::Status TimeRounds() {
    const int32_t per_call = RoundsPerCall();
    const double start_s = clock_.NowS();
    while (!decision_.stop) {
      const int32_t k =
          fixed_ ? std::min(per_call, options_.stop.fixed_rounds - rounds_) : per_call;
      std::vector<Visit> visits;
      std::vector<PlannedUnit*> unit_of;
      for (int32_t round = rounds_; round < rounds_ + k; ++round) {
        for (int u : RoundOrder(static_cast<int>(units_.size()), round)) {
          if (round % units_[u].every != 0) continue;
          visits.push_back(units_[u].visit);
          unit_of.push_back(&units_[u]);
        }
      }
      ASSIGN_OR_RETURN(std::vector<std::vector<double>> timed, TimeVisits(visits));
      for (size_t v = 0; v < visits.size(); ++v) {
        PlannedUnit& u = *unit_of[v];
        u.series->push_back(Median(timed[v]));
        if (u.samples != nullptr)
          u.samples->insert(u.samples->end(), timed[v].begin(), timed[v].end());
      }
      rounds_ += k;
      elapsed_s_ = clock_.NowS() - start_s;
      // The headline figures and their paired comparisons gate; back to back is reported
      // with the interval its rounds reached.
      double precision = 0;
      for (size_t g = 0; !fixed_ && g < groups_; ++g) precision = std::max(precision, Precision(g));
      if (options_.deadline_unix_ms > 0 && clock_.UnixMs() >= options_.deadline_unix_ms) {
        decision_ = {true, Deadline(precision)};
        deadline_ = true;
      } else {
        decision_ = ShouldStop(options_.stop, rounds_, elapsed_s_, precision);
      }
    }
    return absl::OkStatus();
  }

  // Every timer call is a step of the call's progress (core/progress.h), and a cancel
  // stops the rounds before the next one.
  absl::StatusOr<std::vector<std::vector<double>>> TimeVisits(const std::vector<Visit>& visits) {
    RETURN_IF_ERROR(core::CheckCancel(options_.progress));
    const double began_s = clock_.NowS();
    ASSIGN_OR_RETURN(std::vector<std::vector<double>> timed, timer_.TimeVisits(visits));
    core::StepDone(options_.progress, 1e3 * (clock_.NowS() - began_s));
    if (timed.size() != visits.size()) {
      return absl::InternalError(
          absl::StrCat("the timer answered ", timed.size(), " visits of ", visits.size()));
    }
    for (size_t v = 0; v < visits.size(); ++v) {
      if (timed[v].empty()) {
        return absl::InternalError(absl::StrCat("the timer returned no sample for visit ", v));
      }
    }
    return timed;
  }

  static std::string Deadline(double precision) {
    return absl::StrCat("deadline (", core::stats::PlusMinusPercent(precision), ")");
  }

  // What group g's isolated series can claim (its members' own forms).
  double Precision(size_t g) const {
    std::vector<std::vector<double>> series;
    for (size_t i = 0; i < members_.size(); ++i) {
      if (group_of_[i] == g) series.push_back(forms_[i][0].iso_rounds);
    }
    return GroupPrecision(series);
  }

  // The rounds ended for the whole batch; each group states its own precision.
  std::string GroupStopReason(size_t g) const {
    if (fixed_ || groups_ == 1) return decision_.reason;
    const double precision = Precision(g);
    const StopDecision own = ShouldStop(options_.stop, rounds_, elapsed_s_, precision);
    // Not stopped by its own rule: another group's budget or the deadline ended it.
    return own.stop ? own.reason : Deadline(precision);
  }

  // The fastest form by the paired ratio of its isolated rounds to the member's own
  // (below 1: faster); its series become the member's.
  std::string Contest(size_t i, size_t* kept) const {
    const std::vector<std::string>& names = members_[i].forms;
    const std::vector<FormSeries>& forms = forms_[i];
    double best_ratio = 1.0;
    std::vector<std::string> figures;
    for (size_t f = 1; f < forms.size(); ++f) {
      const core::stats::Interval r =
          core::stats::PairedRatio(forms[f].iso_rounds, forms[0].iso_rounds);
      if (!r.valid) continue;
      figures.push_back(absl::StrFormat("%s %.3f", names[f], r.center));
      if (r.center < best_ratio) {
        *kept = f;
        best_ratio = r.center;
      }
    }
    if (figures.empty()) {
      return absl::StrCat("kept: ", names[0],
                          " (too few rounds to compare the contenders in them)");
    }
    return absl::StrFormat(
        "kept after the item's own rounds: %s (isolated time over %s's, paired over %d rounds: "
        "%s)",
        names[*kept], names[0], rounds_, absl::StrJoin(figures, ", "));
  }

  RoundsResult Finish() {
    RoundsResult out;
    out.rounds = rounds_;
    out.stop_reason = decision_.reason;
    out.deadline = deadline_;
    // Before the series move out: the stop reasons and the contest read them.
    std::vector<std::string> group_reasons;
    for (size_t g = 0; g < groups_; ++g) group_reasons.push_back(GroupStopReason(g));
    for (size_t i = 0; i < members_.size(); ++i) {
      MemberRounds& m = out.members.emplace_back();
      m.stop_reason = group_reasons[group_of_[i]];
      if (Forms(i) > 1) m.contest_note = Contest(i, &m.kept_form);
      FormSeries& kept = forms_[i][m.kept_form];
      m.iso_rounds = std::move(kept.iso_rounds);
      m.iso_samples = std::move(kept.iso_samples);
      m.b2b_rounds = std::move(kept.b2b_rounds);
      m.quant_rounds = std::move(quant_rounds_[i]);
      m.b2b_count = b2b_count_[i];
      m.b2b_every = b2b_every_[i];
    }
    return out;
  }

  const std::vector<MemberSpec>& members_;
  const RoundsOptions& options_;
  Timer& timer_;
  const Clock& clock_;
  const bool fixed_;
  std::vector<size_t> group_of_;  // member -> group, numbered 0..groups_-1
  size_t groups_ = 0;
  std::vector<double> t_iso_, t_quant_;  // pilot: ms per launch; 0 without a pilot
  std::vector<int32_t> b2b_count_, b2b_every_;
  std::vector<std::vector<FormSeries>> forms_;  // member -> form
  std::vector<std::vector<double>> quant_rounds_;
  std::vector<PlannedUnit> units_;
  int32_t rounds_ = 0;
  double elapsed_s_ = 0;
  StopDecision decision_;
  bool deadline_ = false;
};

}  // namespace

StopOptions StopOptionsFor(const core::TimingOptions& timing, size_t members) {
  StopOptions stop;
  stop.fixed_rounds = timing.timed_iters > 0 ? timing.timed_iters : 0;
  stop.precision_target = timing.precision_target;
  stop.budget_s = timing.item_budget_s * static_cast<double>(members);
  return stop;
}

absl::StatusOr<RoundsResult> MeasureRounds(const std::vector<MemberSpec>& members,
                                           const RoundsOptions& options, Timer& timer,
                                           const Clock& clock) {
  if (members.empty()) return absl::InvalidArgumentError("members: nothing to measure");
  return RoundsRun(members, options, timer, clock).Run();
}

}  // namespace gemmprof::measure
