// Model (or shape list) -> the GEMMs a training step or an inference sweep runs.
//
// Conventions (DESIGN.md, "Shapes from a model"):
//  * M = micro_batch_size * sequence_length tokens. Fprop Y = X W^T is (M, K, N);
//    Dgrad swaps K and N, (M, N, K); Wgrad is (K, M, N) of the fprop op.
//  * Report order: every fprop op, then every dgrad op, then every wgrad op; within a
//    pass: attention, dense MLP, router, routed experts, shared experts, LM head.
//  * Op names:
//      qkv        fused Q/K/V projection, N = (heads + 2*kv_heads) * head_dim
//      q_a, q_b   MLA query low-rank down (H -> q_lora_rank) and up
//                 (q_lora_rank -> heads*(qk_nope+qk_rope)); "q" when q_lora_rank == 0
//      kv_a       MLA KV down projection, H -> kv_lora_rank + qk_rope_head_dim
//      kv_b       MLA KV up projection, kv_lora_rank -> heads*(qk_nope + v_head_dim)
//      attn_out   heads*head_dim (MLA: heads*v_head_dim) -> H
//      mlp_up     H -> I, or 2I with gate and up fused when the MLP is gated
//      mlp_gate   H -> I, only with split_gate_up (mlp_up is then H -> I)
//      mlp_down   I -> H
//      router     H -> num_experts (MoE layers)
//      expert_up / expert_gate / expert_down   routed experts, one grouped op each
//      shared_up / shared_gate / shared_down   shared experts as one dense MLP of
//                 intermediate moe_intermediate_size * num_shared_experts (DeepSeek)
//      lm_head    H -> vocab, once per model: per_layer = false, layers = 1
//                 (tie_word_embeddings changes nothing: the GEMM runs either way;
//                 vocab_size 0 means no LM head, as in the seed)
//  * Gated MLP: gated_mlp, or hidden_act "swiglu"/"geglu"/"reglu" (which name a gate).
//    hf_config.h sets gated_mlp for the Llama/Qwen/Mistral/Mixtral/DeepSeek families.
//  * MoE: layers [0, first_dense_layers) have the dense MLP (intermediate_size), the
//    rest have router + experts (+ shared experts). Experts use moe_intermediate_size,
//    or intermediate_size when it is 0 (Mixtral). Routed experts are one grouped op
//    with groups = num_experts; routing (routing.h: moe_routing, or skew:moe_skew, or
//    uniform; seeded by moe_seed) gives each expert its tokens of the step. The op's
//    token dimension is the capacity, the largest count (masked layout: rounded up
//    to a multiple of 16); when the counts differ from it,
//    group_tokens holds them (fprop and dgrad: each expert's M; wgrad: its K, each
//    padded up to a multiple of 16 with zero tokens, as FP8 MoE training pads) and
//    flops count each expert at its own tokens. layout is moe_layout, or by default
//    masked at or below 256 tokens per step and contiguous above. Before routing,
//    every expert ran at the hottest one's load (moe_skew's old meaning).
//  * Tensor parallel tp (per-rank shapes): column-parallel ops (qkv, q_b, kv_b, q,
//    mlp_up/gate, expert/shared up/gate, lm_head) divide N by tp; row-parallel ops
//    (attn_out, mlp_down, expert/shared down) divide K by tp. Heads divide by tp; KV
//    heads divide by tp when kv_heads >= tp, otherwise each rank holds one replicated KV
//    head (tp must then be a multiple of kv_heads). Not split: router, MLA q_a and kv_a
//    (replicated, as in Megatron-Core). Experts are split by tp too (expert tensor
//    parallelism = tp; expert parallelism is not modeled).
//  * Sequence parallel changes no GEMM shape: the activations are all-gathered along
//    the sequence before each column-parallel GEMM and reduce-scattered after each
//    row-parallel one, so every TP GEMM still sees the full M; only communication
//    changes, which gemmprof does not time.
//  * Inference sweep (sweep_m non-empty): fprop only. For each M in sweep_m (in order),
//    the fprop ops of the model at tokens = M, ops with identical (shape, groups,
//    per_layer) merged into one whose name joins theirs with '+' and whose layers are
//    summed (layers counts occurrences, so full-model sums stay right); names get
//    "@m=<M>", e.g. "qkv@m=16". <M> is the tokens of the step; routed-expert ops
//    carry their per-expert counts and capacity as above.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gemm.h"
#include "core/job.h"
#include "core/model_config.h"
#include "core/status.h"

namespace gemmprof::core {

// True when the MLP has a gate: gated_mlp, or hidden_act swiglu / geglu / reglu.
bool IsGatedMlp(const ModelConfig& config);

// Validates `spec` (ValidateJobSpec) and derives its plan: the model's GEMMs as above,
// or for a shape list one fprop op per shape named "MxKxN", model_name "shapes",
// num_layers 1. Errors: InvalidArgument from validation, or naming a derived op whose
// dimension exceeds kMaxDim or whose M*K*N overflows int64. Pure; thread-safe.
absl::StatusOr<Plan> DerivePlan(const JobSpec& spec);

// The model's GEMMs without field validation; ValidateModelConfig calls it to check
// derived dimensions. Callers should use DerivePlan. Errors: InvalidArgument naming an
// op whose dimension is < 1 or > kMaxDim, or whose M*K*N overflows int64.
absl::StatusOr<Plan> DeriveModelPlan(const ModelConfig& config);

// The tokens of an inference-sweep op's step, from its name ("qkv+mlp_up@m=16" -> 16),
// or nullopt for any other op.
std::optional<int64_t> SweepM(const std::string& op_name);

// Work items of a plan, op-major: for each op, each recipe, each mode; seq = 0..n-1,
// id and job_id left 0. Empty `recipes` means DefaultRecipes() when `variants` is empty
// too; empty `modes` means {Mode::kAutocast}. Each variant adds, for an op of pass P, the
// item that answers it in P (ItemFor under the job's `job_fast_accum`: the recipe it runs
// there, with the variant's own fast accumulation where that differs from the job's) when
// no earlier item of the op is that one (after `recipes`, in variant order). Pure;
// thread-safe.
std::vector<WorkItem> ExpandItems(const Plan& plan, const std::vector<Recipe>& recipes,
                                  const std::vector<Mode>& modes,
                                  const std::vector<RecipeVariant>& variants = {},
                                  FastAccum job_fast_accum = FastAccum::kDefault);

// The passes of `plan` (fprop, dgrad, wgrad order, each once) in which variant `v` runs
// items of its own under the job's `job_fast_accum` (ItemFor gives them a setting of their
// own): empty for a variant that runs only the items of the recipes its passes run.
std::vector<Pass> OwnItemPasses(const RecipeVariant& v, const Plan& plan, FastAccum job_fast_accum);

}  // namespace gemmprof::core
