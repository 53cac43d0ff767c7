"""The strategy programs the EvoSyn document prints (seed 001): Figure 3 and Appendix A.3's
Figures 10-14, copied verbatim from the document's text, line numbers, wrapped lines and all.

``unnumber`` turns a listing back into the code it shows: the line numbers go, a wrapped line
(one without a number) joins the line it continues, and the indentation after the number is
snapped to the listing's four-column steps (the text extraction shifts some lines by a column:
Figure 14's lines 10-13 sit one column left of its lines 15-29). Nothing else changes.
"""

from __future__ import annotations

import re

# Figure 3: The best strategy explored by model on LiveCodeBench
FIGURE_3 = """\
1  # Compute solution_quality: fraction of testings passed by the solution.
2  total_testings = len(testing_id_list)
3  solution_quality = {}
4  for solution_id in solution_id_list:
5      count = len(solution_pass_testing[solution_id])
6      solution_quality[solution_id] = count / total_testings
7
8  # Compute testing_quality: difference between average solution_quality of passed vs
   failed solutions
9  testing_quality = {}
10 total_quality_all = sum(solution_quality.values())
11 total_solutions = len(solution_id_list)
12 for testing_id in testing_id_list:
13     passed_solutions = testing_accept_solutions[testing_id]
14     n_passed = len(passed_solutions)
15     total_quality_passed = 0.0
16     if n_passed > 0:
17         for sol_id in passed_solutions:
18             total_quality_passed += solution_quality[sol_id]
19         passed_avg = total_quality_passed / n_passed
20     else:
21         passed_avg = 0.0
22
23     n_failed = total_solutions - n_passed
24     if n_failed > 0:
25         total_quality_failed = total_quality_all - total_quality_passed
26         failed_avg = total_quality_failed / n_failed
27     else:
28         failed_avg = 0.0
29
30     testing_quality[testing_id] = passed_avg - failed_avg
31
32 # Sort solutions by solution_quality (descending) and testings by testing_quality
   (descending)
33 sorted_solutions = sorted(solution_id_list, key=lambda x: solution_quality[x],
   reverse=True)
34 sorted_testings = sorted(testing_id_list, key=lambda x: testing_quality[x],
   reverse=True)
"""


# Figure 10: TF-IDF-like approach
FIGURE_10 = """\
1  # Compute n_T for each testing: number of solutions that passed the testing
2  n_T = {}
3  for testing_id in testing_id_list:
4      n_T[testing_id] = len(testing_accept_solutions[testing_id])
5
6  # Compute solution weights: using a TF-IDF like measure: weight of a solution is the
  sum of 1.0 / n_T for each testing it passed.
7  for solution_id in solution_id_list:
8      weight = 0.0
9      for testing_id in solution_pass_testing[solution_id]:
10         # If n_T[testing_id] is zero, skip to avoid division by zero (though it should
  be at least 1 since the solution passed it)
11         if n_T[testing_id] > 0:
12             weight += 1.0 / n_T[testing_id]
13         solution_weights[solution_id] = weight
14
15  # Compute testing_weights: 1/n_T for each testing, as a measure of how hard the
  testing is
16  testing_weights = {}
17  for testing_id in testing_id_list:
18      n = n_T[testing_id]
19      if n > 0:
20          testing_weights[testing_id] = 1.0 / n
21      else:
22          testing_weights[testing_id] = 0
"""


# Figure 11: Coverage-based approach
FIGURE_11 = """\
1  # Compute solution weights: number of testings passed
2  for solution_id in solution_id_list:
3      solution_weights[solution_id] = len(solution_pass_testing[solution_id])
4
5  # Precompute total solution weight and total solutions for efficiency
6  total_solution_weight = sum(solution_weights.values())
7  total_solutions = len(solution_id_list)
8  # Compute testing weights: discrimination index (passed_avg_adjusted - failed_avg)
9  for testing_id in testing_id_list:
10     solutions_passed = testing_accept_solutions[testing_id]
11     n_passed = len(solutions_passed)
12     n_failed = total_solutions - n_passed
13     if n_passed == 0:
14         total_passed = 0
15         passed_avg = 0.0
16     else:
17         total_passed = sum(solution_weights[sol_id] for sol_id in solutions_passed)
18         passed_avg = (total_passed - n_passed) / n_passed # subtract one for each
  passed solution (to remove the current testing) and average
19     if n_failed == 0:
20         failed_avg = 0.0
21     else:
22         total_failed = total_solution_weight - total_passed
23         failed_avg = total_failed / n_failed
24     testing_weights[testing_id] = passed_avg - failed_avg
"""


# Figure 12: Inverse filtering approach
FIGURE_12 = """\
1  solution_weights = {solution_id: len(solution_pass_testing[solution_id]) for
  solution_id in solution_id_list}
2  total_solutions = len(solution_id_list)
3  testing_weights = {testing_id: total_solutions -
  len(testing_accept_solutions[testing_id]) for testing_id in testing_id_list}
"""


# Figure 13: Exclusion-based approach
FIGURE_13 = """\
1  # Compute solution weights: number of testings passed
2  for solution_id in solution_id_list:
3      solution_weights[solution_id] = len(solution_pass_testing[solution_id])
4
5  # Compute testing weights: average solution weight without the current testing for
  solutions that passed the testing.
6  for testing_id in testing_id_list:
7      solutions_passed = testing_accept_solutions[testing_id]
8      n = len(solutions_passed)
9      if n > 0:
10         total_weight = sum(solution_weights[sol_id] for sol_id in solutions_passed)
11         testing_weights[testing_id] = (total_weight - n) / n
12     else:
13         testing_weights[testing_id] = 0
"""


# Figure 14: Hardness-Aware approach
FIGURE_14 = """\
1  solution_weights = {solution_id: len(solution_pass_testing[solution_id]) for
  solution_id in solution_id_list}
2  total_solutions = len(solution_id_list)
3  testing_weights = {testing_id: total_solutions -
  len(testing_accept_solutions[testing_id]) for testing_id in testing_id_list}
4
5  # For each solution, compute the average testing weight (i.e., the average number of
  solutions failed by the testings that this solution passes)
6  solution_avg_testing_weight = {}
7  for solution_id in solution_id_list:
8      passed_testings = solution_pass_testing[solution_id]
9      if passed_testings:
10         avg_weight = sum(testing_weights[testing_id] for testing_id in
  passed_testings) / len(passed_testings)
11     else:
12         avg_weight = 0
13     solution_avg_testing_weight[solution_id] = avg_weight
14
15  # Sort solutions by: first the average testing weight (descending), then by the number
  of testings passed (descending)
16  best_solutions = sorted(solution_id_list, key=lambda x:
  (solution_avg_testing_weight[x], solution_weights[x]), reverse=True)
17
18  # Penalize testings that fail all solutions (broken testings) and also testings that
  pass all solutions (too lenient)
19  testing_penalties = {}
20  for testing_id in testing_id_list:
21      count = len(testing_accept_solutions[testing_id])
22      if count == 0:
23         # broken: reject all
24         testing_penalties[testing_id] = -100 * total_solutions
25      elif count == total_solutions:
26         # too lenient: accept all
27         testing_penalties[testing_id] = -50 * total_solutions
28      else:
29         testing_penalties[testing_id] = 0
"""


PRINTED = {
    "Figure 3": FIGURE_3,
    "Figure 10": FIGURE_10,
    "Figure 11": FIGURE_11,
    "Figure 12": FIGURE_12,
    "Figure 13": FIGURE_13,
    "Figure 14": FIGURE_14,
}

NUMBERED = re.compile(r"^(\d+)( *)(.*)$")


def unnumber(listing: str) -> str:
    """The code a printed listing shows (see the module docstring)."""
    rows: list[tuple[int, str]] = []  # (column where the code starts, code)
    for line in listing.splitlines():
        numbered = NUMBERED.match(line)
        if numbered:
            number, gap, code = numbered.groups()
            rows.append((len(number) + len(gap), code))
        elif line.strip() and rows:
            column, code = rows[-1]
            rows[-1] = (column, f"{code} {line.strip()}")
    base = min(column for column, code in rows if code)
    lines = []
    for column, code in rows:
        steps = int((column - base) / 4 + 0.5) if code else 0
        lines.append(" " * (4 * steps) + code if code else "")
    return "\n".join(lines) + "\n"
