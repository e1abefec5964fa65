"""The API reference's grouping by task: every documented public name of mixeval in exactly one group.

``GROUPS`` maps a group to its title, one sentence and its names (relative to ``mixeval``, as documented:
where ``__all__`` first defines them; ``apigen.reference_entries`` gives that place). A new public name needs
one entry here; the docs build and ``tests/docs/test_api_reference.py`` fail while a public name is missing or
a listed name is not public. The group ``internals`` holds building blocks that other parts of mixeval and
advanced users call (the engine's stages, the command line's parser, report sections); it is documented on
its own page, outside the index by task.
"""

from __future__ import annotations

GROUPS: dict[str, tuple[str, str, list[str]]] = {
    "study": (
        "A study: one evaluation log, one model",
        "The usual entry point: roles inferred from an lme4 formula; variance components, reliability, "
        "significance, uncertainty and a report as methods.",
        ["study.Study"],
    ),
    "models": (
        "Fitting mixed models (lme4)",
        "Linear and generalised linear mixed models with lme4's formula syntax, and the likelihood-ratio test.",
        ["fit", "lmer", "glmer", "mixed.clmm", "mixed.compare", "mixed.MixedResult", "mixed.LmerResult",
         "mixed.GlmerResult", "mixed.ClmmResult", "mixed.threshold_spread_test", "mixed.nominal_test",
         "formula.parse_formula", "formula.model_matrix"],
    ),
    "families": (
        "Response distributions (families)",
        "One protocol for every family (link, response checks, log-likelihood, dispersion, simulation, latent "
        "variance, what it supports), one module per family, and the registry that fitting calls and the "
        "command line read.",
        ["mixed.families.Family", "mixed.families.get_family", "mixed.families.family_names",
         "mixed.families.gaussian.Gaussian", "mixed.families.binomial.Binomial", "mixed.families.poisson.Poisson",
         "mixed.families.negative_binomial.NegativeBinomial", "mixed.families.beta.Beta",
         "mixed.families.ordered_beta.OrderedBeta", "mixed.families.beta_binomial.BetaBinomial",
         "mixed.families.ordinal.Ordinal", "mixed.families.Support", "mixed.families.STUDY_METHODS",
         "mixed.families.Link", "mixed.families.get_link", "mixed.families.LINKS", "mixed.families.ExponentialFamily",
         "mixed.families.REGISTRY", "mixed.families.FAMILIES", "mixed.families.register_family",
         "mixed.families.unregister_family", "mixed.families.DISTRIBUTION_VARIANCE"],
    ),
    "reliability": (
        "Reliability and designs",
        "Variance components, phi (Definition 3.2), the D-study and the cheapest design (book Chapter 3).",
        ["reliability.variance_table", "reliability.phi", "reliability.dstudy", "reliability.cheapest_design",
         "reliability.DesignChoice", "reliability.inter_rater", "reliability.intra_rater",
         "reliability.error_variance", "reliability.components_of", "reliability.latent_components",
         "reliability.latent_scale_note", "reliability.reach_probability", "reliability.draws_interval",
         "reliability.SCALES", "reliability.resolve_scale", "reliability.scale_note", "reliability.BOUND_METHODS",
         "reliability.studentized_bound", "reliability.draw_moments"],
    ),
    "significance": (
        "Significance: marginal means, contrasts, tests (emmeans)",
        "The GLRT, estimated marginal means, pairwise contrasts and trends with a choice of df (book Chapter 4).",
        ["significance.glrt", "significance.glrt_averaged", "significance.emmeans", "significance.pairwise",
         "significance.contrast", "significance.CONTRAST_METHODS", "significance.joint_tests",
         "significance.margin_tests",
         "significance.PairwiseResult", "significance.emmeans_response", "significance.pairwise_ratios",
         "significance.pairwise_differences", "significance.emmeans_ordinal", "significance.pairwise_ordinal",
         "significance.ORDINAL_MODES", "significance.emtrends", "significance.pairwise_trends",
         "significance.bin_property", "significance.plot_emmeans", "significance.plot_contrasts",
         "significance.plot_trends", "significance.ADJUSTMENTS", "significance.DF_METHODS"],
    ),
    "uncertainty": (
        "Uncertainty and power",
        "Profile, bootstrap and Wald intervals of a fit's parameters; intervals of phi and the D-study; power "
        "by simulation.",
        ["uncertainty.confint", "uncertainty.ConfintResult", "uncertainty.profile_intervals", "uncertainty.profile_zeta", "uncertainty.wald_intervals",
         "uncertainty.bootstrap_fit", "uncertainty.BootstrapResult", "uncertainty.variance_table_ci",
         "uncertainty.phi_interval", "uncertainty.coefficient_interval", "uncertainty.dstudy_intervals",
         "uncertainty.study_power", "uncertainty.power_from_components", "uncertainty.PowerResult",
         "uncertainty.closed_form_paired_power", "uncertainty.crossed_design"],
    ),
    "resampling": (
        "Resampling and classical tests",
        "Paired bootstrap and permutation tests, t and z tests, bootstrap intervals, many-system comparisons "
        "and the best-of-budget interval (book Sections 3.2, 4.1, 4.2).",
        ["resampling.paired_bootstrap_test", "resampling.permutation_test", "resampling.paired_t_test",
         "resampling.z_test", "resampling.compare_systems", "resampling.multi_bootstrap_test",
         "resampling.bootstrap_ci", "resampling.percentile_interval", "resampling.bca_interval",
         "resampling.budget_ci", "resampling.BudgetResult", "resampling.expected_max", "resampling.plot_budget",
         "resampling.wide_scores", "resampling.bleu_from_counts", "resampling.f1_from_counts",
         "resampling.precision_from_counts", "resampling.recall_from_counts", "resampling.accuracy_from_counts",
         "resampling.backend"],
    ),
    "agreement": (
        "Agreement coefficients",
        "Krippendorff's alpha, Cohen's kappa, Scott's pi, and alpha beside phi (book Section 3.3.1).",
        ["agreement.krippendorff_alpha", "agreement.cohens_kappa", "agreement.scotts_pi", "agreement.agreement",
         "agreement.alpha_vs_phi", "agreement.AgreementResult", "agreement.ratings_matrix",
         "agreement.phi_from_components", "agreement.LEVELS"],
    ),
    "validity": (
        "Validity: circularity, dataset bias, invariance",
        "The book's three validity tests and the GAMs behind the circularity test (book Chapter 2).",
        ["validity.circularity_test", "validity.distillation_test", "validity.CircularityResult",
         "validity.nullification_ratios", "validity.rank_features", "validity.fit_gam", "validity.GAMResult",
         "validity.dataset_bias_test", "validity.DatasetBiasResult", "validity.correlation_difference_test",
         "validity.transformation_invariance_test", "validity.InvarianceResult", "validity.permissible_transform",
         "validity.plot_shapes", "validity.plot_shape", "validity.plot_correlations", "validity.step_function"],
    ),
    "metric_model": (
        "When the metric is a model",
        "Intervals for the difference of two systems scored by an imperfect classifier or judge (Goyal et al.).",
        ["metric_model.metric_ci", "metric_model.MetricCI", "metric_model.MetricModel",
         "metric_model.metric_comparisons", "metric_model.coverage_study", "metric_model.METHODS"],
    ),
    "meta": (
        "Meta-evaluation of metrics",
        "Local metric accuracy under perturbations, and selective answering (DiSCA, DiDMA, NiDMA).",
        ["meta.score_pairs", "meta.local_accuracy", "meta.LocalAccuracyResult", "meta.accuracy_equality_test",
         "meta.accuracy_equality_table", "meta.rank_stability_test", "meta.plot_local_accuracy",
         "meta.Perturbation", "meta.DropWords", "meta.RandomTranspositions", "meta.perturb",
         "meta.word_error_rate", "meta.unigram_f1", "meta.chrf", "meta.example_translations",
         "meta.accuracy_coverage_curve", "meta.CoverageCurve", "meta.selective_auc", "meta.disca",
         "meta.DiscaResult", "meta.didma", "meta.nidma", "meta.plot_accuracy_coverage"],
    ),
    "report": (
        "Reports and plots",
        "One self-contained HTML report of a study, its building blocks, and the plots of the book's figures.",
        ["report.build_report", "report.Report", "report.Section", "report.Table", "report.Figure",
         "report.Paragraph", "report.Note", "report.check_evaluation_log", "plots.plot_variance_components",
         "plots.plot_dstudy", "plots.plot_system_boxplots", "plots.plot_interaction"],
    ),
    "logs": (
        "Evaluation-harness logs",
        "Reading lm-evaluation-harness, inspect_ai and HELM logs, and comparing models on them.",
        ["datasets.read_logs", "datasets.read_lm_eval", "datasets.read_inspect", "datasets.read_helm",
         "datasets.read_jsonl", "logs.compare_logs", "logs.LogComparison", "logs.clustered_means", "logs.mcnemar",
         "logs.cluster_mcnemar",
         "logs.plot_leaderboard", "logs.plot_pair_intervals", "logs.check_items", "logs.KEY_COLUMNS"],
    ),
    "preferences": (
        "Pairwise preferences (arena votes)",
        "Bradley-Terry models of pairwise votes, Elo-scale scores and how many votes a ranking needs.",
        ["preferences.bradley_terry", "preferences.PreferenceResult", "preferences.to_elo",
         "preferences.votes_needed", "preferences.simulate_arena", "preferences.simulation_targets"],
    ),
    "scale": (
        "Big logs: DuckDB, Parquet and Spark",
        "Fits and tests from aggregates computed where the data live.",
        ["scale.as_engine", "scale.lmer_aggregate", "scale.glmer_aggregate", "scale.poisson_bootstrap_paired",
         "scale.poisson_weights", "scale.SUPPORTED_MODELS"],
    ),
    "data": (
        "Data sets",
        "The book's data, the bundled simulated evaluation and the small simulated tables of the examples.",
        ["datasets.load", "datasets.load_demo", "datasets.load_demo_truth", "datasets.write_demo", "datasets.DEMO_FILES",
         "datasets.toy_scores",
         "datasets.list_datasets",
         "datasets.find_data_dir", "datasets.cache_dir", "datasets.SOURCE_REPOSITORY"],
    ),
    "reproductions": (
        "Reproductions of the book and the papers",
        "Each table and figure recomputed (also ``mixeval reproduce NAME``).",
        ["reproductions.available", "reproductions.get", "reproductions.default_data_dir",
         "reproductions.book.table_3_1", "reproductions.book.table_3_2", "reproductions.book.table_3_4",
         "reproductions.book.table_3_8", "reproductions.book.table_3_9", "reproductions.book.table_3_10",
         "reproductions.book.table_3_11", "reproductions.book.figure_3_3", "reproductions.book.figure_3_5",
         "reproductions.book.table_4_1", "reproductions.book.table_4_2", "reproductions.book.table_4_3",
         "reproductions.validity.table_2_5", "reproductions.validity.table_2_5_binomial",
         "reproductions.validity.ir_search", "reproductions.validity.liver_circularity",
         "reproductions.validity.load_ir", "reproductions.validity.mgcv_reference",
         "reproductions.goyal.table_1", "reproductions.goyal.table_2", "reproductions.goyal.PAPER_TABLE_1",
         "reproductions.goyal.PAPER_TABLE_2"],
    ),
    "results": (
        "Results, errors and warnings",
        "The shared result types, and every exception and warning mixeval raises on purpose.",
        ["TestResult", "ConfidenceInterval", "errors.MixevalError", "errors.InputError", "errors.InputTypeError",
         "errors.ColumnError", "errors.FormulaError", "errors.ModelComparisonError", "errors.MixevalWarning",
         "errors.SingularFitWarning", "errors.BoundaryWarning", "errors.ConvergenceWarning",
         "errors.IdentifiabilityWarning", "errors.SeparationWarning", "errors.FamilyWarning",
         "errors.BasisLimitWarning", "errors.DroppedRowsWarning", "errors.FewLevelsWarning",
         "errors.EmptyCategoryWarning", "errors.RankDeficientWarning", "errors.recorded_warnings"],
    ),
    "internals": (
        "Building blocks",
        "Public for those who extend mixeval or need one stage of a pipeline; the functions above are built "
        "from them.",
        ["mixed.build_design", "mixed.Design", "mixed.GroupingFactor", "mixed.compute_stats",
         "mixed.SufficientStats", "mixed.profiled_deviance", "mixed.deviance_parts", "mixed.optimize_theta",
         "mixed.fit_design", "mixed.fit_from_stats", "mixed.make_result", "formula.ParsedFormula",
         "formula.RandomTerm", "formula.FormulaVariable", "formula.model_frame_spec", "formula.ModelFrameSpec",
         "formula.response_values", "formula.prepare_plain_columns", "formula.quote_name",
         "formula.kept_columns", "formula.kept_columns_of_gram", "formula.rank_message", "formula.warn_dropped",
         "formula.RANK_TOL", "formula.collated", "formula.collation_key", "formula.is_text",
         "significance.reference_grid", "significance.ReferenceGrid",
         "significance.kenward_roger_vcov", "significance.expected_variance_covariance",
         "significance.df_inference", "significance.default_df",
         "mixed.clmm_covariance_at", "mixed.profile_interval", "significance.tukey_pvalue",
         "significance.tukey_critical_value",
         "uncertainty.FitModel", "uncertainty.LmmFitModel", "uncertainty.GlmmFitModel",
         "uncertainty.ClmmFitModel",
         "uncertainty.as_fit_model", "uncertainty.RefitSummary", "uncertainty.parametric_refits",
         "uncertainty.component_draws", "uncertainty.phi_draws", "resampling.as_generator",
         "scale.aggregate_stats", "scale.AggregateDesign", "scale.binary_cells", "scale.is_aggregate_source",
         "report.data_section", "report.variance_section", "report.comparison_section",
         "report.conditional_section", "report.trend_section", "report.default_dstudy_grid",
         "report.result_table", "report.text_table", "report.format_number", "report.figure_to_png",
         "report.long_format_hint", "report.interaction_test", "study.check_property", "study.check_system",
         "logs.inspect_value_to_float", "meta.parse_weights", "meta.n_transpositions", "reproductions.register",
         "cli.main", "cli.build_parser", "cli.COMMANDS", "cli.Command", "cli.command_modules",
         "cli.print_json", "errors.caller_stacklevel", "errors.as_flag", "errors.cli_words"],
    ),
}

#: the group documented on its own page, outside the index by task
INTERNAL = "internals"
