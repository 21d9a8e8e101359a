"""Algorithm listings as LaTeX (algorithmicx); filled in below."""


def listing_to_latex(listing) -> str:
    raise NotImplementedError
